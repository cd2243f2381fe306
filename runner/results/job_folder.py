"""A job's folder read back: its records and the settings that label and score it, finished or not.

A job folder is one `python -m runner` wrote: it holds an attempts.jsonl, or (a job that failed or was
killed before its first record) the config.yaml the job writes as it starts, or Hydra's .hydra/config.yaml.
Settings come from the config exactly as the job resolved it: the job's own config.yaml first (written
resolved), else .hydra/config.yaml resolved with the runner's resolvers; a key that still cannot be
resolved falls back to the records themselves.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from runner.records import AttemptRecord, read_attempts

FINISHED = "finished"
INCOMPLETE = "incomplete"  # no summary.json: the job failed or was killed before its end


@dataclass
class Job:
    """One job's records and the settings that label and score it."""

    path: Path
    model: str
    seed: int
    records: list[AttemptRecord]
    task_set: str = "?"
    ks: tuple[int, ...] = (1,)
    ci_level: float = 0.95
    resamples: int = 2000
    boot_seed: int = 0
    slow_ratio: float = 10.0  # efficiency.slow_ratio / lean_ratio, as the job scored them (runner.efficiency)
    lean_ratio: float = 1.0
    label: str = ""
    metrics: dict = field(default_factory=dict)
    recorded: dict = field(default_factory=dict)  # the job's own summary.json, if it has one
    status: str = FINISHED


def natural_key(text: str) -> tuple:
    """Sort key that orders the numbers inside ids by value: HumanEval/2 before HumanEval/10."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text))


def is_job_dir(path: Path) -> bool:
    """Whether `path` is a folder a job wrote (records, its config.yaml or Hydra's .hydra/config.yaml)."""
    path = Path(path)
    return any((path / name).is_file() for name in ("attempts.jsonl", "config.yaml", ".hydra/config.yaml"))


def _configs(job_dir: Path) -> list:
    """The job's configs, the resolved one first; an unreadable file is left out."""
    from runner.resolvers import register_resolvers

    register_resolvers()  # .hydra/config.yaml keeps interpolations such as ${model_name:${.id}}
    found = []
    for candidate in (job_dir / "config.yaml", job_dir / ".hydra" / "config.yaml"):
        if candidate.is_file():
            try:
                found.append(OmegaConf.load(candidate))
            except (OmegaConfBaseException, ValueError, OSError):
                continue
    return found


def _select(configs: list, key: str):
    """The first config's value for `key` that resolves; None when none has it."""
    for cfg in configs:
        try:
            value = OmegaConf.select(cfg, key, default=None, throw_on_resolution_failure=True)
        except OmegaConfBaseException:
            continue
        if value is not None:
            return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
    return None


def load_job(job_dir: Path) -> Job:
    """Read a job folder: attempts.jsonl (partial, or missing for a job that stopped first) and its config."""
    job_dir = Path(job_dir)
    attempts = job_dir / "attempts.jsonl"
    records = read_attempts(attempts) if attempts.is_file() else []
    configs = _configs(job_dir)

    def pick(key: str, fallback):
        value = _select(configs, key)
        return fallback if value is None else value

    model = pick("model.name", records[0].model if records else job_dir.name)
    seed = pick("seed", records[0].seed if records else 0)
    summary = job_dir / "summary.json"
    return Job(
        path=job_dir,
        model=str(model),
        seed=int(seed),
        records=records,
        task_set=str(pick("task_set.name", "?")),
        recorded=json.loads(summary.read_text()) if summary.is_file() else {},
        ks=tuple(pick("scoring.k", [1])),
        ci_level=float(pick("scoring.ci_level", 0.95)),
        resamples=int(pick("scoring.bootstrap_resamples", 2000)),
        boot_seed=int(pick("scoring.bootstrap_seed", 0)),
        slow_ratio=float(pick("efficiency.slow_ratio", 10.0)),
        lean_ratio=float(pick("efficiency.lean_ratio", 1.0)),
        status=FINISHED if summary.is_file() else INCOMPLETE,
    )


def find_job_dirs(paths: list[Path]) -> list[Path]:
    """Expand sweep folders into their job folders; job folders stay as they are."""
    jobs: list[Path] = []
    for p in map(Path, paths):
        if is_job_dir(p):
            jobs.append(p)
        elif p.is_dir():
            jobs.extend(
                sorted((q for q in p.iterdir() if q.is_dir() and is_job_dir(q)), key=lambda q: natural_key(q.name))
            )
    return jobs
