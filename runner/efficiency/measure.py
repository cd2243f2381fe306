"""The efficiency of one passing candidate: its cost on the task's perf inputs against the reference's."""

from __future__ import annotations

import pickle
from dataclasses import replace

from runner.caches.content import Cache
from runner.config import EfficiencyConfig
from runner.efficiency.cost import ERROR, MEASURED, NO_PERF_INPUTS, TOO_SLOW, Cost, Efficiency
from runner.efficiency.perf_inputs import perf_arguments
from runner.efficiency.reference import references
from runner.efficiency.solution import Setting, measure
from runner.efficiency.tools import ToolsMissing, find_tools
from runner.sandbox.workers.pool import WorkerPool
from runner.tasks.model import Task

MIN_REFERENCE_CPU_S = 0.05
"""The reference's CPU time above the baseline's is taken as at least this when the budget's limit is scaled."""


def cpu_limit_s(baseline_cpu_s: float, reference_cpu_s: float, budget: float) -> float:
    """The CPU limit of a candidate's counted run: start-up plus `budget` times the reference's own share, with room.

    Only a backstop that stops an answer far over budget early: an answer that finishes is judged by its count
    (too_slow above budget x the reference's instructions), which does not depend on the machine's load.
    """
    share = max(reference_cpu_s - baseline_cpu_s, MIN_REFERENCE_CPU_S)
    return 1.5 * (baseline_cpu_s + budget * share) + 1.0


def _floored(peak: int | None, floor_bytes: int) -> int:
    return max(peak or 0, floor_bytes)


def measure_efficiency(task: Task, code: str, pool: WorkerPool, cfg: EfficiencyConfig,
                       cache: Cache | None) -> Efficiency:  # fmt: skip
    """Measure one candidate that passed `task` against the task's reference (and graded references, if listed).

    Needs: `code`, the candidate's whole module source (as judged); `pool`, a running `WorkerPool` (the runs
    go through `pool.run_cost`, confined like judging); `cfg`, the `efficiency` config (`budget`,
    `inputs_per_task`, `memory_floor_kb` are read here); `cache`, a `runner.caches.content.Cache` (or None) where the
    perf inputs and the reference's cost are kept by content (namespaces `perf_inputs`, `efficiency_reference`);
    the candidate's own result is not cached here. valgrind and a Python the sandbox uid may run must be
    installed (else status "error" with what to install). Blocking; one candidate costs two sandbox runs (one
    under valgrind, about 20-50x slower than native), a task's first candidate three more for its reference.

    Returns `Efficiency` with status "no_perf_inputs" (the task declares none and has no plus inputs),
    "error" (the reference or the candidate could not be measured: `detail` says why), "too_slow" (the
    candidate went over `budget` times the reference's instructions, or the CPU limit scaled from it) or
    "measured" (`instructions_ratio` and `memory_ratio` set). Never raises for a candidate's behaviour.
    """
    try:
        arguments = perf_arguments(task, cfg.inputs_per_task, cache)
    except ValueError as err:
        return Efficiency(ERROR, reference=Cost(ERROR, detail=str(err)))
    if not arguments:
        return Efficiency(NO_PERF_INPUTS)
    try:
        tools = find_tools()
    except ToolsMissing as err:
        return Efficiency(ERROR, reference=Cost(ERROR, detail=str(err)))
    setting = Setting(pool, tools, pickle.dumps(arguments, protocol=4), task.entry_point, len(arguments))
    found = references(task, setting, cache)
    reference, graded = found.reference.cost, tuple(m.cost for m in found.graded)
    if reference.status != MEASURED:
        return Efficiency(ERROR, reference=replace(reference, status=ERROR), references=graded)
    try:
        compile(code, "solution.py", "exec")
    except (SyntaxError, ValueError) as err:
        return Efficiency(
            ERROR, Cost(ERROR, detail=f"the candidate does not compile: {err}"), reference, references=graded
        )
    limit = cpu_limit_s(found.baseline.cpu_s, found.reference.cpu_s, cfg.budget)
    budget = int(cfg.budget * reference.instructions)
    candidate = measure(replace(setting, baseline=found.baseline), code, limit, budget, found.reference.canonical)
    cost = candidate.cost
    if cost.status != MEASURED:
        return Efficiency(cost.status if cost.status == TOO_SLOW else ERROR, cost, reference, references=graded)
    floor = cfg.memory_floor_kb * 1024
    return Efficiency(
        MEASURED,
        cost,
        reference,
        instructions_ratio=cost.instructions / reference.instructions,
        memory_ratio=_floored(cost.peak_bytes, floor) / _floored(reference.peak_bytes, floor),
        references=graded,
    )
