"""Hydra callback: one MLflow parent run per sweep, with every job's run nested under it, whatever the launcher.

Register in conf/config.yaml:

    hydra:
      callbacks:
        mlflow_sweep:
          _target_: runner.tracking.sweep_callback.MlflowSweepCallback

`on_multirun_start` creates the store and experiment (once, before any job, so parallel jobs never
race on a fresh SQLite file) and the parent run, tagged with a new sweep id (`tracking.SWEEP_TAG`). The id
goes to every job as the environment variable `tracking.SWEEP_ENV`, through the override
`++hydra.job.env_set.RUNNER_SWEEP_ID=<id>` that Hydra applies to each job's config wherever the launcher
composes it (this process, a joblib worker, a Ray worker, a Slurm node), so a job on any node finds its
parent run on the tracking server. The parent's id is also written to the file `tracking.PARENT_FILE` in
the sweep directory and the environment variable `tracking.PARENT_ENV`.

`on_job_end` runs where the job ran: a job that raised is reported on the parent run as the tag
`runner.failed_job.<job number>` (its overrides and error line). The launchers run every job of the sweep
and then re-raise the first failure, so `on_multirun_end` is not called then; either way the sweep's end
writes the sweep report with `runner.report.make_report` (a job that failed shown as incomplete; the
report's figures/ logged to the parent run under figures/, each comparison's verdict as a tag and its figures as
metrics: runner.tracking.sweep_verdicts), lists the failed jobs in the parent run
(tag `runner.failed_jobs`, artifact `failed_jobs.json`) and ends it: FINISHED when every job succeeded,
FAILED when one failed (or the report failed), KILLED on SIGINT / SIGTERM.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, read_write

from runner import interrupt
from runner.config import TrackingConfig
from runner.tracking.local_store import sqlite_path, tracking_client
from runner.tracking.runs import (
    PARENT_ENV,
    PARENT_FILE,
    SWEEP_ENV,
    SWEEP_TAG,
    end_orphaned_runs,
    ensure_store,
    find_parent_run,
    process_tags,
)

log = logging.getLogger(__name__)

FAILED_TAG = "runner.failed_job."
"""Prefix of the parent run's tags that report a failed job: `runner.failed_job.<job number>`."""


class SweepError(RuntimeError):
    """The sweep cannot start as configured; the one-line message says what to change."""


def _tracking(config: DictConfig) -> TrackingConfig:
    return TrackingConfig(**OmegaConf.to_container(config.tracking, resolve=True))


def _sweep_id(config: DictConfig) -> str | None:
    return OmegaConf.select(config, f"hydra.job.env_set.{SWEEP_ENV}", default=None)


class MlflowSweepCallback(Callback):
    """Creates the sweep's MLflow parent run before the jobs and ends it, with the report, after."""

    def __init__(self, report: bool = True) -> None:
        self.report = report
        self.run_id: str | None = None
        self.uri: str | None = None
        self.sweep_dir: Path | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Create the store, the experiment and the parent run; publish the run id for the jobs."""
        if "ray_launcher" in str(OmegaConf.select(config, "hydra.launcher._target_", default="")):
            # Ray's workers use their node's installed environment, not a `uv run` copy of this process's
            # (which Ray makes when the sweep runs under `uv run`, in a fresh environment without the extra).
            os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        tracking = _tracking(config)
        if not tracking.enabled:
            return
        _refuse_unreachable_store(config, tracking)
        experiment_id = ensure_store(tracking)
        sweep_dir = Path(str(config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        overrides = OmegaConf.select(config, "hydra.overrides.task", default=[]) or []
        self.uri = tracking.uri
        client = tracking_client(self.uri)
        end_orphaned_runs(client, experiment_id)  # e.g. the parent run of a sweep that got `kill -9`
        sweep_id = uuid.uuid4().hex
        tags = {
            SWEEP_TAG: sweep_id,
            "runner.role": "sweep",
            "runner.sweep_dir": str(sweep_dir.resolve()),
            "runner.overrides": " ".join(str(o) for o in overrides)[:8000],
            "runner.launcher": str(OmegaConf.select(config, "hydra.launcher._target_", default="")),
            **process_tags(),
        }
        run = client.create_run(experiment_id, run_name=f"sweep {sweep_dir.parent.name}/{sweep_dir.name}", tags=tags)
        self.run_id = run.info.run_id
        self.sweep_dir = sweep_dir
        marker = {"run_id": self.run_id, "tracking_uri": self.uri, "experiment_id": experiment_id}
        (sweep_dir / PARENT_FILE).write_text(json.dumps(marker) + "\n")
        os.environ[PARENT_ENV] = self.run_id
        with read_write(config.hydra.overrides):  # Hydra composes every job's config with these overrides
            config.hydra.overrides.hydra.append(f"++hydra.job.env_set.{SWEEP_ENV}='{sweep_id}'")
        atexit.register(self._end_at_exit)  # a job raised or the sweep was interrupted: no on_multirun_end

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        """Where the job ran: report a job that raised on the sweep's parent run (tag FAILED_TAG<num>)."""
        from hydra.core.utils import JobStatus

        if job_return.status != JobStatus.FAILED or not OmegaConf.select(config, "tracking.enabled", default=False):
            return
        error = job_return._return_value  # the exception; the public `return_value` re-raises it
        first_line = (str(error).strip().splitlines() or [""])[0]
        num = OmegaConf.select(config, "hydra.job.num", default="?")
        overrides = " ".join(job_return.overrides or [])
        try:
            tracking = _tracking(config)
            experiment_id = ensure_store(tracking)
            client = tracking_client(tracking.uri)
            out_dir = Path(str(OmegaConf.select(config, "hydra.runtime.output_dir", default=".")))
            parent = find_parent_run(client, experiment_id, out_dir, sweep_id=_sweep_id(config)) or self.run_id
            if parent:
                value = f"{overrides}: {type(error).__name__}: {first_line}"
                client.set_tag(parent, f"{FAILED_TAG}{num}", value[:8000])
        except Exception as exc:  # reporting must not hide the job's own error
            log.warning("could not report failed job %s on the sweep's parent run: %s", num, exc)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Write the sweep report, list failed jobs, log both to the parent run and end it."""
        self._finish("FINISHED")

    def _end_at_exit(self) -> None:
        self._finish("KILLED" if interrupt.received() is not None else "FAILED")

    def _finish(self, status: str) -> None:
        """Report, list the failed jobs and end the parent run with `status` (FAILED if a job failed); once."""
        if self.run_id is None:
            return
        run_id, self.run_id = self.run_id, None
        if os.environ.get(PARENT_ENV) == run_id:
            del os.environ[PARENT_ENV]
        client = tracking_client(self.uri)
        try:
            failed = _log_failed_jobs(client, run_id)
            if failed and status == "FINISHED":
                status = "FAILED"
            if status != "KILLED":
                self._log_report(client, run_id)
        except Exception:
            status = "FAILED" if status == "FINISHED" else status
            log.exception("sweep report failed; parent run %s marked FAILED", run_id)
        finally:
            client.set_terminated(run_id, status)

    def _log_report(self, client: Any, run_id: str) -> None:
        from runner.results.job_folder import find_job_dirs

        jobs = find_job_dirs([self.sweep_dir])
        client.set_tag(run_id, "runner.jobs", str(len(jobs)))
        if self.report and jobs:
            from runner.report import make_report
            from runner.tracking.sweep_verdicts import log_verdicts

            report = make_report(jobs, self.sweep_dir)
            comparisons = json.loads((report.parent / "report.json").read_text())["comparisons"]
            log_verdicts(client, run_id, comparisons)  # runner.tracking.sweep_verdicts
            for name in (report.name, "pass_counts.png", "task_heatmap.png", "report.json"):
                path = report.parent / name
                if path.is_file():
                    client.log_artifact(run_id, str(path), "report")
            if (report.parent / "figures").is_dir():  # sweep_pass_at_1.png, sweep_paired.png (sweep_figures)
                client.log_artifacts(run_id, str(report.parent / "figures"), "figures")


def _log_failed_jobs(client: Any, run_id: str) -> list[dict]:
    """The jobs reported failed on the parent run, logged there as `failed_jobs.json` and a count tag."""
    tags = client.get_run(run_id).data.tags
    failed = [
        {"job": key[len(FAILED_TAG) :], "error": value}
        for key, value in sorted(tags.items(), key=lambda item: item[0])
        if key.startswith(FAILED_TAG)
    ]
    if failed:
        client.set_tag(run_id, "runner.failed_jobs", str(len(failed)))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "failed_jobs.json"
            path.write_text(json.dumps(failed, indent=2) + "\n")
            client.log_artifact(run_id, str(path))
        log.error("%d job(s) of the sweep failed: %s", len(failed), "; ".join(f["error"] for f in failed))
    return failed


def _refuse_unreachable_store(config: DictConfig, tracking: TrackingConfig) -> None:
    """Refuse a Slurm sweep on a local SQLite file: jobs on other nodes would each log to a file of their own."""
    launcher = str(OmegaConf.select(config, "hydra.launcher._target_", default=""))
    if sqlite_path(tracking.uri) is not None and "SlurmLauncher" in launcher:
        raise SweepError(
            f"tracking.uri={tracking.uri} is a SQLite file on this machine, which jobs on Slurm nodes cannot "
            "share; start a tracking server (make server, see README 'Running on a cluster') and set "
            "tracking.uri=http://HOST:5000"
        )
