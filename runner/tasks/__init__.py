"""Task sets: the task model, the YAML loader and the benchmark importers."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from runner.config import Importer, TaskSetConfig
from runner.tasks.loader import TaskError, load_task_dir
from runner.tasks.model import SUITES, Task, task_set_hash

EVALPLUS_IMPORTERS = (Importer.humanevalplus, Importer.humanevalplus_mini, Importer.mbppplus)
"""Task sets whose hidden suite is EvalPlus's `base` and whose properties suite its `plus` inputs."""
PROJECT_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["SUITES", "Task", "TaskError", "load_task_set", "select_tasks", "subset_tag", "task_set_hash"]


def load_task_set(cfg: TaskSetConfig, cache_dir: str | Path = ".cache/runner") -> list[Task]:
    """Load the tasks a `task_set` config names, then apply its ids / limit / created_after filters.

    For the EvalPlus sets the filters come first, so expected outputs (kept under `cache_dir`) are
    computed only for the tasks selected. A benchmark set, once built, is kept whole under `cache_dir`
    (runner.tasks.snapshot).
    """

    def select(tasks: list[Task]) -> list[Task]:
        return select_tasks(tasks, list(cfg.ids), cfg.limit, cfg.created_after)

    if cfg.importer == Importer.yaml:
        path = Path(cfg.path)
        if not path.is_absolute() and not path.exists():
            path = PROJECT_ROOT / path
        return select(load_task_dir(path))
    from runner.tasks import importers
    from runner.tasks.snapshot import snapshot_tasks

    name = Importer(cfg.importer).value
    loader = getattr(importers, f"load_{name}")
    if cfg.importer in EVALPLUS_IMPORTERS:
        build = lambda: loader(cfg.path, select=select, cache_dir=cache_dir)  # noqa: E731
    else:
        build = lambda: select(loader(cfg.path))  # noqa: E731
    parts = (name, list(cfg.ids), cfg.limit, cfg.created_after)
    return snapshot_tasks(cache_dir, parts, importers.dataset_files(name, cfg.path), build)


def select_tasks(tasks: list[Task], ids: list[str], limit: int, created_after: str) -> list[Task]:
    """Keep the listed ids (all if empty), tasks created after a date (if given), then the first `limit`."""
    if ids:
        known = {t.id for t in tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise TaskError(
                "task_set.ids",
                None,
                f"unknown task ids {unknown}; known ids start with {sorted(known)[:5]}",
            )
        tasks = [t for t in tasks if t.id in set(ids)]
    if created_after:
        try:
            cutoff = dt.date.fromisoformat(created_after)
        except ValueError:
            raise TaskError("task_set.created_after", None, f"{created_after!r} is not a date (YYYY-MM-DD)") from None
        tasks = [t for t in tasks if t.created is not None and t.created > cutoff]
    return tasks[:limit] if limit > 0 else tasks


def subset_tag(cfg) -> str:
    """How a `task_set` config narrows its set: "ids=a,b", "limit=N" (both joined by "; "), or "" for all."""
    parts = [f"ids={','.join(cfg.ids)}"] if cfg.ids else []
    parts += [f"limit={cfg.limit}"] if cfg.limit > 0 else []
    return "; ".join(parts)
