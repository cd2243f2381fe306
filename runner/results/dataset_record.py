"""Which data a job used: its task set as a dataset record, in its folder and as its MLflow run's input.

A job writes DATASET_FILE (`dataset.json`) into its folder: the set's name, its source (the release address
of an imported benchmark, else the task folder or file), the content digest of the tasks it scored (the
`task_set_hash` of runner.tasks, order-free), the subset (`ids`, `limit`, `created_after`) and the tasks the
gold check excluded. With tracking on, the same goes to the run as an MLflow dataset input (`log_inputs`,
context `evaluation`), so the runs table shows each run's dataset. `dataset_mismatch` / `same_dataset` tell
whether two job folders used the same data, so that reports and comparisons pair only such runs.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from runner.config import TaskSetConfig
from runner.tasks import subset_tag, task_set_hash

DATASET_FILE = "dataset.json"
DIGEST_CHARS = 36  # MLflow keeps at most 36 characters of a dataset's digest


class DatasetMismatch(ValueError):
    """Two runs used different data; the message says which, in one line."""


def dataset_info(task_set: TaskSetConfig, tasks: list, excluded: list[dict] | None = None) -> dict[str, Any]:
    """The dataset record of a job that scored `tasks` (Task objects) of `task_set`."""
    from runner.tasks.datasets import FILES

    release = FILES.get(task_set.importer)
    return {
        "name": task_set.name,
        "source": release.url if release else _local_source(task_set),
        "source_type": "release" if release else "path",
        "path": task_set.path,
        "importer": task_set.importer,
        "release_sha256": release.sha256 if release else "",
        "digest": task_set_hash(tasks),
        "tasks": len(tasks),
        "subset": subset_tag(task_set),
        "ids": list(task_set.ids),
        "limit": task_set.limit,
        "created_after": task_set.created_after,
        "gold_excluded": sorted(row["task_id"] for row in excluded or []),
    }


def _local_source(task_set: TaskSetConfig) -> str:
    """The task folder or file, absolute (a relative YAML folder is found as runner.tasks finds it)."""
    from runner.tasks import PROJECT_ROOT

    if not task_set.path and task_set.importer == "humaneval":
        from runner.tasks.importers import humaneval_data_file

        return str(humaneval_data_file())
    path = Path(task_set.path)
    if not path.is_absolute() and not path.exists() and task_set.importer == "yaml":
        path = PROJECT_ROOT / path
    return str(path.resolve())


def write_dataset_file(out_dir: Path, info: dict[str, Any]) -> Path:
    """Write the job's dataset record to out_dir/dataset.json."""
    path = Path(out_dir) / DATASET_FILE
    path.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    return path


def log_dataset(client: Any, run_id: str, info: dict[str, Any]) -> None:
    """Log the dataset record as the run's input (name, source, digest; the subset and size as input tags)."""
    from mlflow.data.dataset_source_registry import resolve_dataset_source
    from mlflow.data.http_dataset_source import HTTPDatasetSource
    from mlflow.data.meta_dataset import MetaDataset
    from mlflow.entities import DatasetInput, InputTag

    if info["source_type"] == "release":
        source = HTTPDatasetSource(info["source"])
    else:
        with warnings.catch_warnings():  # "can be interpreted in multiple ways": both ways are the local one
            warnings.simplefilter("ignore")
            source = resolve_dataset_source(info["source"])
    dataset = MetaDataset(source, name=info["name"], digest=info["digest"][:DIGEST_CHARS])
    tags = {"mlflow.data.context": "evaluation", "subset": info["subset"] or "all", "tasks": str(info["tasks"])}
    entity = DatasetInput(dataset._to_mlflow_entity(), tags=[InputTag(k, v) for k, v in tags.items()])
    for tries_left in reversed(range(_CREATE_RACE_TRIES)):
        try:
            client.log_inputs(run_id, datasets=[entity])
            return
        except Exception as exc:
            # Jobs started together (a parallel sweep) each find the dataset missing and insert it; the losers'
            # insert fails on the store's unique key, and logging again finds the winner's row.
            if tries_left == 0 or not any(taken in str(exc) for taken in _DATASET_ROW_TAKEN):
                raise


_CREATE_RACE_TRIES = 3
_DATASET_ROW_TAKEN = ("UNIQUE constraint failed: datasets.", "duplicate key value violates unique constraint")
"""What SQLite and PostgreSQL say when another job inserted the same dataset row first."""


def read_dataset(job_dir: Path) -> dict[str, Any] | None:
    """A job folder's dataset record; None for a folder without one (a job from before, or one that failed)."""
    path = Path(job_dir) / DATASET_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, OSError):
        return None


def _label(info: dict[str, Any]) -> str:
    subset = f" [{info['subset']}]" if info.get("subset") else ""
    return (
        f"{info.get('name', '?')}{subset} ({info.get('tasks', '?')} tasks, digest {str(info.get('digest', ''))[:12]})"
    )


def dataset_mismatch(job_a: Path, job_b: Path) -> str | None:
    """One line saying how the data of two job folders differ; None when they used the same data.

    Compares the content digests of the tasks each scored. A folder without a dataset record (written before
    jobs wrote one, or by a job that failed first) cannot be checked and is taken as matching.
    """
    a, b = read_dataset(job_a), read_dataset(job_b)
    if a is None or b is None or a.get("digest") == b.get("digest"):
        return None
    return (
        f"runs used different datasets: {Path(job_a).name} scored {_label(a)}, {Path(job_b).name} scored "
        f"{_label(b)}; compare runs of one task set and subset"
    )


def same_dataset(job_a: Path, job_b: Path) -> bool:
    """Whether two job folders used the same data (see `dataset_mismatch`)."""
    return dataset_mismatch(job_a, job_b) is None


def require_same_dataset(job_dirs: list[Path]) -> None:
    """Raise DatasetMismatch (one line) unless every job folder used the same data as the first."""
    for other in job_dirs[1:]:
        problem = dataset_mismatch(job_dirs[0], other)
        if problem:
            raise DatasetMismatch(problem)
