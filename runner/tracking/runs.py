"""MLflow tracking: one run per job, nested under the sweep's parent run when there is one.

A job's run is opened once its preflight passed (`JobRun(cfg, out_dir)`, called by runner.job.run after the model
answered: RUNNING, the config as params; a job stopped by bad input before then has no run), gets
progress metrics while the job runs, its results at the end, and ends FINISHED, FAILED or KILLED.
`ensure_store` creates the store safely (runner.tracking.local_store) and the experiment. A job finds its sweep's parent
run on the tracking server by the sweep id (`find_parent_run`: the environment variable SWEEP_ENV, the same
in every job of a sweep on any node, and the tag SWEEP_TAG on the parent run), or else through the file
PARENT_FILE in the sweep directory or the environment variable PARENT_ENV, which
`runner.tracking.sweep_callback.MlflowSweepCallback` writes. With `tracking.enabled=false` nothing here
imports or touches MLflow.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from runner import interrupt
from runner.config import Config, TrackingConfig
from runner.records import AttemptRecord
from runner.tracking.local_store import prepare_sqlite_store, sqlite_path, tracking_client

log = logging.getLogger(__name__)

PARENT_ENV = "RUNNER_MLFLOW_PARENT_RUN_ID"
PARENT_FILE = "mlflow_parent_run.json"
SWEEP_ENV = "RUNNER_SWEEP_ID"  # set in every job of a sweep (hydra.job.env_set, by runner.tracking.sweep_callback)
SWEEP_TAG = "runner.sweep_id"
PROGRESS_EVERY_S = 10.0
"""Progress metrics are logged at most this often while a job runs (and once at its end)."""

# MLflow's limits (mlflow.utils.validation): key length, value lengths and batch sizes.
MAX_KEY = 250
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
BATCH = 100


def ensure_store(tracking: TrackingConfig) -> str | None:
    """Create the tracking store and experiment if missing; return the experiment id.

    Returns None without importing MLflow when tracking is disabled. A local SQLite store is created
    whole or not at all (runner.tracking.local_store; StoreError when it is half-migrated). A new experiment stores its
    artifacts under `artifact_root` (made absolute), except on a tracking server (http/https URI), whose
    own artifact root (`mlflow server --artifacts-destination`) every node reaches through the server.
    """
    if not tracking.enabled:
        return None
    db = sqlite_path(tracking.uri)
    if db is not None:
        prepare_sqlite_store(db)
    from mlflow.exceptions import MlflowException

    client = tracking_client(tracking.uri)
    name = tracking.experiment
    experiment = client.get_experiment_by_name(name)
    if experiment is None:
        location = None
        if tracking.artifact_root and not is_server(tracking.uri):
            root = Path(tracking.artifact_root).resolve()
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
            f"MLflow experiment {name!r} at {tracking.uri} is deleted; restore it "
            f"(mlflow experiments restore --experiment-id {experiment.experiment_id}) "
            "or set tracking.experiment to another name"
        )
    return experiment.experiment_id


def is_server(uri: str) -> bool:
    """Whether the tracking URI names a tracking server (`mlflow server`), not a local store."""
    return uri.startswith(("http://", "https://"))


def end_status(exc: BaseException) -> str:
    """The MLflow status of a run its job left by `exc`: KILLED (SIGINT / SIGTERM, Ctrl-C) or FAILED."""
    return "KILLED" if interrupt.received() is not None or isinstance(exc, KeyboardInterrupt) else "FAILED"


def process_tags() -> dict[str, str]:
    """Tags naming the process that owns a run: host and pid (for finding runs whose process died), and the
    Ray node or Slurm job it runs in when a launcher put it there."""
    tags = {"runner.host": socket.gethostname(), "runner.pid": str(os.getpid())}
    ray = sys.modules.get("ray")  # imported only in a Ray worker (or a Ray launcher's driver)
    if ray is not None and ray.is_initialized():
        tags["runner.ray_node_id"] = ray.get_runtime_context().get_node_id()
    if os.environ.get("SLURM_JOB_ID"):
        tags["runner.slurm_job_id"] = os.environ["SLURM_JOB_ID"]
    return tags


def end_orphaned_runs(client: Any, experiment_id: str) -> list[str]:
    """End KILLED the RUNNING runs of this host whose process is gone (`kill -9` ends no run); their ids."""
    host = socket.gethostname()
    query = f"attributes.status = 'RUNNING' and tags.`runner.host` = '{host}'"
    ended = []
    for run in client.search_runs([experiment_id], filter_string=query):
        pid = int(run.data.tags.get("runner.pid") or 0)
        if pid > 0 and not _process_exists(pid):
            client.set_terminated(run.info.run_id, "KILLED")
            ended.append(run.info.run_id)
    return ended


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def flatten_config(cfg: Config | Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """The config as dotted keys -> string values (lists as JSON)."""
    items = dataclasses.asdict(cfg) if dataclasses.is_dataclass(cfg) else cfg
    out: dict[str, str] = {}
    for key, value in items.items():
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


def find_parent_run(client: Any, experiment_id: str, out_dir: Path, sweep_id: str | None = None) -> str | None:
    """The sweep parent run id for a job, or None for a single run.

    First the sweep run tagged SWEEP_TAG = `sweep_id` (default: the environment variable SWEEP_ENV) on the
    tracking server, which a job on any node reaches; then the sweep directory's PARENT_FILE (Hydra's sweep
    dir when running in a multirun, else the job directory's parent); then the environment variable PARENT_ENV.
    """
    sweep_id = sweep_id or os.environ.get(SWEEP_ENV)
    if sweep_id and re.fullmatch(r"[A-Za-z0-9_.-]+", sweep_id):
        query = f"tags.`{SWEEP_TAG}` = '{sweep_id}' and tags.`runner.role` = 'sweep'"
        found = client.search_runs([experiment_id], filter_string=query, max_results=1)
        if found:
            return found[0].info.run_id
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
    """A readable test log of one attempt: outcome, detail, suites and per-test results; where extraction
    or sanitizing changed the answer's code, the code that was judged."""
    lines = [f"outcome: {record.outcome.value}"] + ([f"server: {record.server}"] if record.server else [])
    if record.rule:
        lines.append(f"rule: {record.rule}" + (f" (line {record.line})" if record.line else ""))
    for v in record.violations:
        lines.append(f"gate violation (reported, not enforced): rule {v['rule']} at line {v['line']}: {v['message']}")
    for note in record.extraction:
        lines.append(f"extraction: {note}")
    if record.efficiency is not None:  # a passing final answer's cost against the reference (runner.efficiency)
        e = record.efficiency
        lines.append(f"efficiency: {e['status']}, instructions ratio {e.get('instructions_ratio')}, "
                     f"memory ratio {e.get('memory_ratio')}" + (f" ({e['candidate']['detail']})"
                     if (e.get("candidate") or {}).get("detail") else ""))  # fmt: skip
    for suite, ok in record.suites.items():
        lines.append(f"suite {suite}: {'passed' if ok else 'FAILED'}")
        for t in record.tests.get(suite, []):
            msg = f" - {t.get('message', '')}" if t.get("message") else ""
            lines.append(f"  {t.get('status', '?'):8} {t.get('name', '?')}{msg}")
    if record.detail:
        lines += ["", "detail:", record.detail]
    if record.extraction and record.code is not None:
        lines += ["", "code judged:", record.code.rstrip()]
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


class JobRun:
    """One job's MLflow run, opened when the job starts and ended exactly once."""

    def __init__(self, cfg: Config, out_dir: Path) -> None:
        """Open the run (RUNNING): store and experiment made if missing, tags, the config as params."""
        from mlflow.entities import Param

        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        experiment_id = ensure_store(cfg.tracking)
        self.uri = cfg.tracking.uri
        self.client = tracking_client(self.uri)
        end_orphaned_runs(self.client, experiment_id)
        tags = {"model": cfg.model.name, "seed": str(cfg.seed), "runner.out_dir": str(self.out_dir.resolve())}
        tags.update(process_tags())
        if os.environ.get(SWEEP_ENV):
            tags[SWEEP_TAG] = os.environ[SWEEP_ENV]
        parent = find_parent_run(self.client, experiment_id, self.out_dir)
        if parent:
            try:
                self.client.get_run(parent)
                tags["mlflow.parentRunId"] = parent
            except Exception:
                log.warning("sweep parent run %s not found in %s; logging an unnested run", parent, self.uri)
        run = self.client.create_run(experiment_id, run_name=self.out_dir.name, tags=_truncate(tags, MAX_TAG_VALUE))
        self.run_id: str = run.info.run_id
        self.started_ms = int(run.info.start_time)
        self.ended = False
        self._last_progress = 0.0
        params = [Param(k, v) for k, v in _truncate(flatten_config(cfg), MAX_PARAM_VALUE).items()]
        for i in range(0, len(params), BATCH):
            self.client.log_batch(self.run_id, params=params[i : i + BATCH])

    def progress(self, done: int, passed: int, total: int, force: bool = False) -> None:
        """Log samples done / passed so far (step = samples done), at most every PROGRESS_EVERY_S seconds."""
        now = time.monotonic()
        if not force and now - self._last_progress < PROGRESS_EVERY_S and done < total:
            return
        self._last_progress = now
        from mlflow.entities import Metric

        stamp = int(time.time() * 1000)
        values = {"progress_samples_done": done, "progress_samples_passed": passed, "progress_samples_total": total}
        try:
            self.client.log_batch(self.run_id, metrics=[Metric(k, float(v), stamp, done) for k, v in values.items()])
        except Exception as exc:  # progress is a convenience: a busy store must not stop the job
            log.warning("MLflow progress not logged: %s", exc)

    def log_results(
        self, cfg: Config, records: list[AttemptRecord], metrics: dict, tags: dict[str, str], task_rows: list[dict]
    ) -> None:
        """Log the job's results on the run: metrics, tags and the artifacts `log_job` lists."""
        from mlflow.entities import Metric, RunTag

        from runner.tracking.run_views import mlflow_metrics  # all but the zero-count outcome rates

        out_dir, client, run_id = self.out_dir, self.client, self.run_id
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in _truncate(tags, MAX_TAG_VALUE).items()])
        now = int(time.time() * 1000)
        values = [Metric(k, float(v), now, 0) for k, v in mlflow_metrics(metrics).items()]
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

    def end(self, status: str) -> None:
        """End the run with FINISHED, FAILED or KILLED (once; later calls do nothing)."""
        if self.ended:
            return
        self.ended = True
        self.client.set_terminated(self.run_id, status)


def log_job(
    cfg: Config,
    out_dir: Path,
    records: list[AttemptRecord],
    metrics: dict,
    tags: dict[str, str],
    task_rows: list[dict],
) -> str | None:
    """Log one finished job as a whole MLflow run and return its run id (None when tracking is disabled).

    Params: the flattened config. Tags: `tags` plus model name, seed, output dir, host and pid, and
    `mlflow.parentRunId` when the job belongs to a sweep. Metrics: `metrics` (None values skipped).
    Artifacts: config.yaml, attempts.jsonl, summary.md (the job's own if out_dir has one, else the metrics
    table), metrics.md, summary.json / run.json when present, attempts/<task>/<sample>_<attempt>/
    (response, code, test log), any *.png in out_dir under plots/, and the per-task table tasks.json.
    A job logs the same through `JobRun`, on a run it opened when it started.
    """
    if not cfg.tracking.enabled:
        return None
    run = JobRun(cfg, out_dir)
    try:
        run.log_results(cfg, records, metrics, tags, task_rows)
    except BaseException as exc:
        run.end(end_status(exc))
        raise
    run.end("FINISHED")
    return run.run_id
