"""CPU time limits scaled from each task's reference, as EvalPlus scales its per-input time limits.

A function task whose reference passed the gold check in `seconds` (its whole sandboxed run, every suite)
gets `max(MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR * seconds)` CPU seconds per suite: EvalPlus 0.3.1's floor
and factor (runner.tasks.plus_oracle), so a looping answer costs a worker one second instead of the
sandbox's `cpu_s`. The wall clock stays the sandbox's `timeout_s` (a run that waited for a CPU meanwhile
is run again, runner.judging.judge). A task without a measured reference keeps the sandbox's limits, and
so does a task with plus inputs: each of its inputs already has EvalPlus's reference-scaled limit, and a cap
scaled from the whole run would fail answers EvalPlus passes (HumanEval/24 counting down from n: 12 times
the reference over all inputs, every input well under its own limit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from runner.tasks.model import Task
from runner.tasks.plus_oracle import DATA_FILE, MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR


def cpu_limit(seconds: float) -> float:
    """The per-suite CPU limit of a task whose reference ran in `seconds`."""
    return round(max(MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR * seconds), 2)


def cpu_limits(gold_rows: Iterable[Mapping]) -> dict[str, float]:
    """Task id -> CPU limit, for every gold-check row of a reference that passed with a measured time."""
    return {row["task_id"]: cpu_limit(row["seconds"]) for row in gold_rows
            if row["status"] == "ok" and row.get("seconds")}  # fmt: skip


def with_cpu_limit(task: Task, limits: Mapping[str, float]) -> Task:
    """Function `task` with its reference-scaled CPU limit, when `limits` has one (tasks with plus inputs keep
    their per-input limits)."""
    limit = limits.get(task.id)
    if limit is None or DATA_FILE in task.files or task.cpu_limit_s == limit:
        return task
    return dataclasses.replace(task, cpu_limit_s=limit)
