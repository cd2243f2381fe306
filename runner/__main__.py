"""Hydra entry point: `python -m runner [overrides]`; `-m` sweeps models and seeds.

Exit code: 0 when the job finished and every sample was scored; 2 when it finished but some work was
unscored (backend or harness errors) or tasks were excluded by the gold check; 1 when it could not run.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from runner.config import register_configs

register_configs()
log = logging.getLogger("runner")


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> int:
    """Run one job of the experiment the config declares."""
    from runner.generation.backends.base import BackendError
    from runner.job import JobError, run_job
    from runner.tasks import TaskError

    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    try:
        code = run_job(cfg, Path(hydra_cfg.runtime.output_dir))
    except (JobError, TaskError, BackendError) as exc:
        log.error("%s", exc)
        if multirun:
            raise
        sys.exit(1)
    if not multirun and code:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
