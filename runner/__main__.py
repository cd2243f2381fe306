"""Hydra entry point: `python -m runner [overrides]`; `-m` sweeps models and seeds.

Exit code: 0 when the job finished and every sample was scored; 2 when it finished but some work was
unscored (backend or harness errors) or tasks were excluded by the gold check; 1 when it could not run
(bad config, bad task file, unreachable backend, unusable tracking store); 130 on Ctrl-C (SIGINT) and
143 on SIGTERM, after the sandbox workers are stopped (records written so far stay in attempts.jsonl).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from runner import interrupt
from runner.config import register_configs

register_configs()
interrupt.install()  # here, not in main(): a sweep can be interrupted between its jobs too
log = logging.getLogger("runner")


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> int:
    """Run one job of the experiment the config declares."""
    from runner.generation.backends.base import BackendError
    from runner.job import JobError, run_job
    from runner.tasks import TaskError
    from runner.validation import ConfigError, typed_config

    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    out_dir = Path(hydra_cfg.runtime.output_dir)
    try:
        code = run_job(typed_config(cfg), out_dir)
    except (ConfigError, JobError, TaskError, BackendError) as exc:
        log.error("%s", exc)
        if multirun:
            raise
        sys.exit(1)
    except interrupt.Interrupted as stop:
        print(
            f"interrupted ({stop}): sandbox workers stopped; records so far kept in {out_dir / 'attempts.jsonl'}",
            file=sys.stderr,
        )
        sys.exit(stop.exit_code)
    if not multirun and code:
        sys.exit(code)
    return code


if __name__ == "__main__":
    try:
        main()
    except interrupt.Interrupted as stop:  # outside a job: while Hydra composes or between a sweep's jobs
        print(f"interrupted ({stop})", file=sys.stderr)
        sys.exit(stop.exit_code)
