"""MLflow tracking: one run per job, nested under the sweep's parent run when there is one.

The store is created once by `ensure_store` (the sweep callback calls it before any job starts, so
parallel jobs never race on a fresh SQLite database). A job finds its sweep's parent run through the
environment variable PARENT_ENV or the file PARENT_FILE in the sweep directory, which
`runner.sweep_callback.MlflowSweepCallback` writes. With `tracking.enabled=false` nothing here
imports or touches MLflow.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from runner.records import AttemptRecord

log = logging.getLogger(__name__)

PARENT_ENV = "RUNNER_MLFLOW_PARENT_RUN_ID"
PARENT_FILE = "mlflow_parent_run.json"

# MLflow's limits (mlflow.utils.validation): key length, value lengths and batch sizes.
MAX_KEY = 250
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
BATCH = 100


def _get(cfg: Any, key: str, default: Any = None) -> Any:
    """`key` (dotted) from a DictConfig, a mapping or a dataclass; `default` when absent or missing."""
    node = cfg
    for part in key.split("."):
        try:
            node = node.get(part) if isinstance(node, Mapping) else getattr(node, part, None)
        except Exception:  # a MISSING ("???") value
            return default
        if node is None:
            return default
    return node


def _sqlite_path(uri: str) -> Path | None:
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


def ensure_store(tracking_cfg: Any) -> str | None:
    """Create the tracking store and experiment if missing; return the experiment id.

    `tracking_cfg` has `enabled`, `uri`, `experiment`, `artifact_root` (runner.config.TrackingConfig
    or a DictConfig of it). Returns None without importing MLflow when tracking is disabled. A new
    experiment stores its artifacts under `artifact_root` (made absolute).
    """
    if not _get(tracking_cfg, "enabled", True):
        return None
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    uri = str(_get(tracking_cfg, "uri"))
    name = str(_get(tracking_cfg, "experiment", "runner"))
    db = _sqlite_path(uri)
    if db is not None:
        db.parent.mkdir(parents=True, exist_ok=True)
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        artifact_root = _get(tracking_cfg, "artifact_root", "")
        location = None
        if artifact_root:
            root = Path(str(artifact_root)).resolve()
            root.mkdir(parents=True, exist_ok=True)
            location = root.as_uri()
        try:  # the tag makes MLflow 3's UI open the experiment in its "Model training" (runs) view
            return client.create_experiment(
                name, artifact_location=location, tags={"mlflow.experimentKind": "custom_model_development"}
            )
        except MlflowException:  # created meanwhile by another process
            experiment = client.get_experiment_by_name(name)
            if experiment is None:
                raise
    if experiment.lifecycle_stage == "deleted":
        raise RuntimeError(
            f"MLflow experiment {name!r} at {uri} is deleted; restore it "
            f"(mlflow experiments restore --experiment-id {experiment.experiment_id}) "
            "or set tracking.experiment to another name"
        )
    return experiment.experiment_id


def flatten_config(cfg: Any, prefix: str = "") -> dict[str, str]:
    """The resolved config as dotted keys -> string values (lists as JSON); the `hydra` node is dropped."""
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    out: dict[str, str] = {}
    for key, value in cfg.items():
        if not prefix and key == "hydra":
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten_config(value, prefix=f"{name}."))
        elif isinstance(value, list | tuple | Mapping):
            out[name] = json.dumps(value, ensure_ascii=False, default=str)
        else:
            out[name] = str(value)
    return out


def _truncate(items: Mapping[str, Any], limit: int) -> dict[str, str]:
    return {k[:MAX_KEY]: str(v)[:limit] for k, v in items.items()}


def find_parent_run(out_dir: Path) -> str | None:
    """The sweep parent run id for a job, or None for a single run.

    Looked up in the sweep directory's PARENT_FILE (Hydra's sweep dir when running in a multirun, else
    the job directory's parent), then in the environment variable PARENT_ENV.
    """
    candidates = []
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        if HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN:
            candidates.append(Path(HydraConfig.get().sweep.dir) / PARENT_FILE)
    except Exception:  # not under Hydra
        pass
    candidates.append(Path(out_dir).resolve().parent / PARENT_FILE)
    for path in candidates:
        if path.is_file():
            return json.loads(path.read_text())["run_id"]
    return os.environ.get(PARENT_ENV) or None


def _safe(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", part).strip("._") or "_"


def format_test_log(record: AttemptRecord) -> str:
    """A readable test log of one attempt: outcome, detail, suites and per-test results."""
    lines = [f"outcome: {record.outcome}"]
    if record.rule:
        lines.append(f"rule: {record.rule}" + (f" (line {record.line})" if record.line else ""))
    for v in record.violations:
        lines.append(f"gate violation (reported, not enforced): rule {v['rule']} at line {v['line']}: {v['message']}")
    for note in record.extraction:
        lines.append(f"extraction: {note}")
    for suite, ok in record.suites.items():
        lines.append(f"suite {suite}: {'passed' if ok else 'FAILED'}")
        for t in record.tests.get(suite, []):
            msg = f" - {t.get('message', '')}" if t.get("message") else ""
            lines.append(f"  {t.get('status', '?'):8} {t.get('name', '?')}{msg}")
    if record.detail:
        lines += ["", "detail:", record.detail]
    return "\n".join(lines) + "\n"


def write_attempt_files(out_dir: Path, records: list[AttemptRecord]) -> Path:
    """Write raw response, extracted code and test log per attempt under out_dir/attempts/."""
    root = Path(out_dir) / "attempts"
    for r in records:
        d = root / _safe(r.task_id) / f"{r.sample}_{r.attempt}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "response.txt").write_text(r.response)
        (d / "code.py").write_text(r.code if r.code is not None else "# no code extracted\n")
        (d / "test_log.txt").write_text(format_test_log(r))
    return root


def summary_markdown(metrics: Mapping[str, float], title: str = "") -> str:
    """A two-column Markdown table of a job's metrics."""
    lines = [f"# {title}", ""] if title else []
    lines += ["| metric | value |", "|---|---|"]
    for key in sorted(metrics):
        value = metrics[key]
        shown = f"{value:.4f}" if isinstance(value, float) and not value.is_integer() else f"{value:g}"
        lines.append(f"| {key} | {shown} |")
    return "\n".join(lines) + "\n"


def _columns(rows: list[dict]) -> dict[str, list]:
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    return {k: [row.get(k) for row in rows] for k in keys}


def log_job(
    cfg: DictConfig,
    out_dir: Path,
    records: list[AttemptRecord],
    metrics: dict,
    tags: dict[str, str],
    task_rows: list[dict],
) -> str | None:
    """Log one job as an MLflow run and return its run id (None when tracking is disabled).

    Params: the flattened resolved config. Tags: `tags` plus model name, seed and output dir, and
    `mlflow.parentRunId` when the job belongs to a sweep. Metrics: `metrics` (None values skipped).
    Artifacts: config.yaml, attempts.jsonl, summary.md (the job's own if out_dir has one, else the metrics
    table), metrics.md, summary.json / run.json when present, attempts/<task>/<sample>_<attempt>/
    (response, code, test log), any *.png in out_dir under plots/, and the per-task table tasks.json.
    """
    if not _get(cfg, "tracking.enabled", False):
        return None
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    experiment_id = ensure_store(cfg.tracking)
    client = MlflowClient(tracking_uri=str(cfg.tracking.uri))
    model, seed = str(_get(cfg, "model.name", "")), str(_get(cfg, "seed", ""))
    all_tags = {**tags, "model": model, "seed": seed, "runner.out_dir": str(out_dir.resolve())}
    parent = find_parent_run(out_dir)
    if parent:
        try:
            client.get_run(parent)
            all_tags["mlflow.parentRunId"] = parent
        except Exception:
            log.warning("sweep parent run %s not found in %s; logging an unnested run", parent, cfg.tracking.uri)
    run = client.create_run(experiment_id, run_name=out_dir.name, tags=_truncate(all_tags, MAX_TAG_VALUE))
    run_id = run.info.run_id
    try:
        params = [Param(k, v) for k, v in _truncate(flatten_config(cfg), MAX_PARAM_VALUE).items()]
        for i in range(0, len(params), BATCH):
            client.log_batch(run_id, params=params[i : i + BATCH])
        now = int(run.info.start_time)
        values = [Metric(k, float(v), now, 0) for k, v in metrics.items() if v is not None]
        for i in range(0, len(values), 1000):
            client.log_batch(run_id, metrics=values[i : i + 1000])

        (out_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
        attempts = out_dir / "attempts.jsonl"
        if not attempts.is_file():
            attempts.write_text("".join(r.to_json() + "\n" for r in records))
        (out_dir / "metrics.md").write_text(summary_markdown(metrics, title=out_dir.name))
        if not (out_dir / "summary.md").is_file():  # the job's own summary table wins when it wrote one
            (out_dir / "summary.md").write_text(summary_markdown(metrics, title=out_dir.name))
        for name in ("config.yaml", "attempts.jsonl", "summary.md", "metrics.md", "summary.json", "run.json"):
            if (out_dir / name).is_file():
                client.log_artifact(run_id, str(out_dir / name))
        if records:
            client.log_artifacts(run_id, str(write_attempt_files(out_dir, records)), "attempts")
        for png in sorted(out_dir.glob("*.png")):
            client.log_artifact(run_id, str(png), "plots")
        if task_rows:
            client.log_table(run_id, data=_columns(task_rows), artifact_file="tasks.json")
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return run_id
