"""Perf inputs for HumanEval: the plus inputs HumanEval+ adds to the same task, since HumanEval has none.

HumanEval+ (EvalPlus) is HumanEval with the same 164 prompts and entry points and many more inputs per task;
EvalPerf picks its perf inputs from those. A HumanEval task without `perf_inputs` borrows its HumanEval+
twin's table, so `runner.evaluate efficiency=true task_set=humaneval` measures on the same inputs as
`task_set=humanevalplus` (the selection still times HumanEval's own reference). Only efficiency sees the
borrowed table: the task that is judged is unchanged.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from runner.tasks.model import Task
from runner.tasks.plus_oracle import DATA_FILE

BORROWS_FROM = {"humaneval": "humanevalplus"}
"""task_set.importer -> the task set whose plus inputs it borrows."""


def borrowed_table(importer: str, task: Task) -> bytes | None:
    """The plus-input table `task` borrows: None when its set borrows none or it has inputs of its own.

    The first call loads HumanEval+ (its file from RUNNER_DATASETS_DIR, the user cache or a verified download;
    expected outputs computed once and cached), so it may raise the set's one-line DatasetError.
    """
    if importer not in BORROWS_FROM or task.perf_inputs or DATA_FILE in task.files:
        return None
    return _tables(BORROWS_FROM[importer]).get(task.id)


@functools.cache
def _tables(set_name: str) -> dict[str, bytes]:
    from runner.tasks.importers import load_humanevalplus

    return {t.id: t.files[DATA_FILE] for t in load_humanevalplus(set_name=set_name) if DATA_FILE in t.files}


def with_borrowed_inputs(task: Task, table: bytes | None) -> Task:
    """`task` with the borrowed plus table `table` (itself when None): what efficiency measures on."""
    return task if table is None else replace(task, files={**task.files, DATA_FILE: table})
