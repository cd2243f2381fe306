"""Hydra entry point: `python -m runner [overrides]`; `-m` sweeps models and seeds.

Exit code: 0 when the job finished and every sample was scored; 2 when it finished but some work was
unscored (backend or harness errors) or tasks were excluded by the gold check; 1 when it could not run
(bad config, bad task file, unreachable backend, unusable tracking store), said in one line on stderr;
130 on Ctrl-C (SIGINT) and 143 on SIGTERM, after the sandbox workers are stopped (records written so far
stay in attempts.jsonl). A job that stops on bad input before any work leaves no folder and no MLflow
run (runner.job.unstarted). Each phase of a job's start is a line on stderr (runner.job.phases).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

from runner import interrupt
from runner.job.phases import ComposingNotice

STARTED_AT = time.time()  # before Hydra makes the job's folder: anything older there is not this job's
FULL_ERROR = "HYDRA_FULL_ERROR"
USER_FULL_ERROR = bool(os.environ.get(FULL_ERROR))  # the user asked for Hydra's own report with a traceback
log = logging.getLogger("runner")
QUIET_LOGGERS = ("httpx", "httpcore")
"""Libraries whose INFO lines (`HTTP Request: POST ...`, one per request) are not the job's to show."""
COMPOSING_LINE_AFTER_S = 1.0
"""Hydra composes the config twice before the job's first line; when that takes longer, a line says so."""


def main() -> None:
    """Compose the config (Hydra: conf/ and the command line's overrides) and run its job, or each of a sweep."""
    import hydra

    from runner.config import register_configs

    register_configs()
    hydra.main(version_base="1.3", config_path="../conf", config_name="config")(job)()


def job(cfg) -> int:
    """Run one job of the experiment the config declares."""
    ComposingNotice.cancel()  # the job says what it does from here (runner.job.phases)
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from runner.generation.backends.base import BackendError
    from runner.job.run import JobError, NotStarted, run_job
    from runner.job.unstarted import discard
    from runner.tasks import TaskError
    from runner.validation import ConfigError, typed_config

    for chatty in QUIET_LOGGERS:  # Hydra's console handler shows INFO; these say it for every request
        logging.getLogger(chatty).setLevel(logging.WARNING)
    hydra_cfg = HydraConfig.get()
    multirun = hydra_cfg.mode == RunMode.MULTIRUN
    out_dir = Path(hydra_cfg.runtime.output_dir)
    try:
        code = run_job(typed_config(cfg), out_dir)
    except (ConfigError, JobError, TaskError, BackendError) as exc:
        if not multirun and isinstance(exc, ConfigError | TaskError | NotStarted):
            discard(out_dir, STARTED_AT - 1.0)  # a sweep keeps it: its report shows which of its jobs failed, why
        log.error("%s", exc)
        if multirun:
            raise
        sys.exit(1)
    except interrupt.Interrupted as stop:
        print(
            f"interrupted ({stop}): sandbox workers stopped; records so far kept in {out_dir / 'attempts.jsonl'}",
            file=sys.stderr,
        )
        interrupt.exit_now(stop.exit_code)
    if not multirun and code:
        sys.exit(code)
    return code


def _reported(exc: Exception) -> str | None:
    """The one line for an input error that reached the top (None: a bug, for its traceback); "" when the job
    has said it already (a sweep's job re-raises its error for Hydra to count it failed)."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from runner.generation.backends.base import BackendError
    from runner.job.run import JobError
    from runner.override_errors import message
    from runner.tasks import TaskError
    from runner.validation import ConfigError

    if isinstance(exc, ConfigError | JobError | TaskError | BackendError):
        return ""
    return message(exc) if isinstance(exc, HydraException | OmegaConfBaseException) else None


def _runs_a_job(argv: list[str]) -> bool:
    """False for Hydra's informational flags (--help, --cfg job, --info, ...), which print and run nothing,
    and with `progress=false`, which silences the phase lines."""
    quiet = any(arg.lower() in ("progress=false", "++progress=false") for arg in argv)
    return not quiet and not any(arg.startswith("-") and arg not in ("-m", "--multirun") for arg in argv)


if __name__ == "__main__":
    interrupt.install()  # before Hydra composes: a sweep can be interrupted between its jobs too
    if _runs_a_job(sys.argv[1:]):
        ComposingNotice.start(COMPOSING_LINE_AFTER_S)
    # Hydra prints its own errors in several lines unless HYDRA_FULL_ERROR is set; set, they reach this
    # handler, which says them in one line (runner.override_errors). A user who set it gets Hydra's report.
    os.environ.setdefault(FULL_ERROR, "1")
    try:
        main()
    except interrupt.Interrupted as stop:  # outside a job: while Hydra composes or between a sweep's jobs
        print(f"interrupted ({stop})", file=sys.stderr)
        sys.exit(stop.exit_code)
    except Exception as exc:
        ComposingNotice.cancel()
        line = None if USER_FULL_ERROR else _reported(exc)
        if line is None:
            raise
        if line:
            print(f"error: {line}", file=sys.stderr)
        sys.exit(1)
