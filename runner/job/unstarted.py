"""A job that stopped on bad input before any work leaves no folder behind.

Hydra creates the job's folder (with its `.hydra/` record and the job's log) before the job runs, and the
job writes `config.yaml` first and `gold.json` while the model loads. When the job stops before the model
answered its preflight (a bad value, a task selection that selects nothing, a missing or corrupt dataset,
an unreachable server: runner.job.run.NotStarted), `discard` removes that folder, but only when it holds
nothing else and nothing older than this process: a folder given again with `hydra.run.dir` that holds an
earlier job's records is left as it is. No MLflow run exists for such a job (runner.job.run opens the run
after the preflight), so nothing is left anywhere. The jobs of a sweep keep their folders (the
`python -m runner -m` entry point does not call `discard` for them): the sweep's folder records every
grid point, and a failed one's log says why it failed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

DISPOSABLE = frozenset({"config.yaml", "gold.json"})
"""The files a job writes before its preflight ends; both are made again by the next job."""


def _made_since(path: Path, since: float) -> bool:
    paths = [path, *path.rglob("*")] if path.is_dir() else [path]
    return all(p.lstat().st_mtime >= since for p in paths)


def disposable(out_dir: Path, since: float) -> bool:
    """Whether `out_dir` holds only Hydra's files and the job's early ones, all written at or after `since`."""
    if not out_dir.is_dir():
        return False
    for entry in out_dir.iterdir():
        known = entry.name == ".hydra" and entry.is_dir() or entry.suffix == ".log" or entry.name in DISPOSABLE
        if not known or not _made_since(entry, since):
            return False
    return True


def discard(out_dir: Path, since: float) -> bool:
    """Remove the folder of a job that never started (see `disposable`); True when it was removed."""
    if not disposable(out_dir, since):
        return False
    shutil.rmtree(out_dir, ignore_errors=True)
    return not out_dir.exists()
