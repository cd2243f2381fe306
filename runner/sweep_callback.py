"""Hydra callback: one MLflow parent run per sweep, with every job's run nested under it.

Register in conf/config.yaml:

    hydra:
      callbacks:
        mlflow_sweep:
          _target_: runner.sweep_callback.MlflowSweepCallback

`on_multirun_start` creates the store and experiment (once, before any job, so parallel jobs never
race on a fresh SQLite file) and the parent run, and publishes its id in the environment variable
`tracking.PARENT_ENV` and the file `tracking.PARENT_FILE` in the sweep directory (jobs run by other
launchers may live in other processes). `on_multirun_end` writes the sweep report with
`runner.report.make_report`, logs it to the parent run and ends it FINISHED; a sweep that stops before
its end (a job raised, or SIGINT / SIGTERM) ends it FAILED or KILLED when the process exits.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from runner import interrupt
from runner.config import TrackingConfig
from runner.tracking import PARENT_ENV, PARENT_FILE, end_orphaned_runs, ensure_store, process_tags

log = logging.getLogger(__name__)


class MlflowSweepCallback(Callback):
    """Creates the sweep's MLflow parent run before the jobs and ends it, with the report, after."""

    def __init__(self, report: bool = True) -> None:
        self.report = report
        self.run_id: str | None = None
        self.uri: str | None = None

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Create the store, the experiment and the parent run; publish the run id for the jobs."""
        tracking = TrackingConfig(**OmegaConf.to_container(config.tracking, resolve=True))
        if not tracking.enabled:
            return
        from mlflow.tracking import MlflowClient

        experiment_id = ensure_store(tracking)
        sweep_dir = Path(str(config.hydra.sweep.dir))
        sweep_dir.mkdir(parents=True, exist_ok=True)
        overrides = OmegaConf.select(config, "hydra.overrides.task", default=[]) or []
        self.uri = tracking.uri
        client = MlflowClient(tracking_uri=self.uri)
        end_orphaned_runs(client, experiment_id)  # e.g. the parent run of a sweep that got `kill -9`
        run = client.create_run(
            experiment_id,
            run_name=f"sweep {sweep_dir.parent.name}/{sweep_dir.name}",
            tags={
                "runner.role": "sweep",
                "runner.sweep_dir": str(sweep_dir.resolve()),
                "runner.overrides": " ".join(str(o) for o in overrides)[:8000],
                **process_tags(),
            },
        )
        self.run_id = run.info.run_id
        marker = {"run_id": self.run_id, "tracking_uri": self.uri, "experiment_id": experiment_id}
        (sweep_dir / PARENT_FILE).write_text(json.dumps(marker) + "\n")
        os.environ[PARENT_ENV] = self.run_id
        atexit.register(self._end_at_exit)  # a job raised or the sweep was interrupted: no on_multirun_end

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        """Write the sweep report, log it to the parent run and end the parent run."""
        if self.run_id is None:
            return
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=self.uri)
        sweep_dir = Path(str(config.hydra.sweep.dir))
        status = "FINISHED"
        try:
            from runner.job_results import find_job_dirs

            jobs = find_job_dirs([sweep_dir])
            client.set_tag(self.run_id, "runner.jobs", str(len(jobs)))
            if self.report and jobs:
                from runner.report import make_report

                report = make_report(jobs, sweep_dir)
                for name in (report.name, "pass_counts.png", "task_heatmap.png", "report.json"):
                    path = report.parent / name
                    if path.is_file():
                        client.log_artifact(self.run_id, str(path), "report")
        except Exception:
            status = "FAILED"
            log.exception("sweep report failed; parent run %s marked FAILED", self.run_id)
        finally:
            self._end_if_running(status)

    def _end_at_exit(self) -> None:
        self._end_if_running("KILLED" if interrupt.received() is not None else "FAILED")

    def _end_if_running(self, status: str) -> None:
        if self.run_id is None:
            return
        from mlflow.tracking import MlflowClient

        run_id, self.run_id = self.run_id, None
        if os.environ.get(PARENT_ENV) == run_id:
            del os.environ[PARENT_ENV]
        MlflowClient(tracking_uri=self.uri).set_terminated(run_id, status)
