"""The task kinds by name, and what runs over a mixed task set: each task's kind found from its `kind`."""

from __future__ import annotations

from typing import Any

from runner.judging.gold_check import GoldResult, check_each
from runner.kinds.base import Bench, TaskKind
from runner.kinds.function import FunctionKind
from runner.kinds.repo import RepoKind

KINDS: dict[str, TaskKind] = {kind.name: kind for kind in (FunctionKind(), RepoKind())}
"""Every kind a task can be; a new kind is one module implementing `TaskKind` and one entry here."""


def kind_of(task: Any) -> TaskKind:
    """The kind of `task` (by its `kind`); ValueError naming the known kinds for any other."""
    kind = KINDS.get(task.kind)
    if kind is None:
        raise ValueError(f"task {task.id}: no task kind {task.kind!r}; the kinds are {', '.join(KINDS)}")
    return kind


def self_contained(tasks: list) -> list:
    """The tasks holding their reference and suites as code (re-scoring, the mutation audit, efficiency apply)."""
    return [task for task in tasks if kind_of(task).self_contained]


def check_references(tasks: list, bench: Bench, threads: int = 4) -> list[GoldResult]:
    """Every task's gold check by its kind, `threads` at a time; results in task order."""
    return check_each(tasks, lambda task: kind_of(task).gold(task, bench), threads)
