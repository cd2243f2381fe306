"""Efficiency scores: per sample the cost ratios to the reference, per task and job their geometric means.

Pure functions over `Efficiency` values (runner.efficiency.cost) and attempt records. Only a sample's final
attempt that passed is measured (runner.job.attempts), so these read nothing else. A ratio is a candidate's
instructions (or peak memory) over its task's reference's: 1.0 costs what the reference costs, 10 ten times more.

- Per task: the geometric mean of the ratios over its measured samples, with a bootstrap CI over those samples,
  and the counts of slow passes (ratio > slow_ratio, and every too_slow one: stopped at the budget, which is at
  least slow_ratio), lean passes (ratio <= lean_ratio), too_slow (their ratio is unknown, so they are left out
  of the means), errors and samples without perf inputs.
- Per job: the geometric mean over tasks of the per-task means, with a bootstrap CI over tasks (the resampling
  of runner.results.scoring.bootstrap_ci, on the logarithms: the geometric mean is the exponential of the mean log).
- Where a task lists graded references (slow to fast): EvalPerf's differential performance score (`dps`).

Metric names (`efficiency_metrics`) are valid MLflow keys.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from runner.efficiency.cost import ERROR, MEASURED, NO_PERF_INPUTS, TOO_SLOW, Cost, Efficiency
from runner.records import AttemptRecord
from runner.results.scoring import bootstrap_ci, group_samples

PREFIX = "efficiency_"


def geo_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive values; ValueError when there are none or one is not positive."""
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"geo_mean needs positive values, got {list(values)[:5]}")
    return math.exp(sum(math.log(v) for v in values) / len(values))


def geo_mean_ci(
    values: Sequence[float], level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the geometric mean: runner.results.scoring.bootstrap_ci on the logarithms."""
    low, high = bootstrap_ci([math.log(v) for v in values], level, resamples, seed)
    return math.exp(low), math.exp(high)


def dps(candidate: Cost | None, references: Sequence[Cost], too_slow: bool = False) -> tuple[float, float] | None:
    """EvalPerf's differential performance score of one passing sample against graded references (slow to fast).

    As evalplus/evalperf.py scores it: going from the fastest reference to the slowest, the first one the sample
    costs no more instructions than is the one it matches; with one reference per efficiency level (EvalPerf's
    clusters, each of weight 1 here), the score is the percentage of references it matches or beats,
    100 (j + 1) / n for the j-th (0 = slowest). Slower than every reference, or stopped at the budget
    (`too_slow`): 0. Returns (dps, dps_norm), equal here since every level weighs one reference; None when
    there is nothing to score (no measured references, or the sample's own count missing).
    """
    counts = [r.instructions for r in references if r.status == MEASURED and r.instructions is not None]
    if not counts or len(counts) != len(references):
        return None
    if too_slow:
        return 0.0, 0.0
    if candidate is None or candidate.instructions is None:
        return None
    for j in range(len(counts) - 1, -1, -1):
        if candidate.instructions <= counts[j]:
            score = 100.0 * (j + 1) / len(counts)
            return score, score
    return 0.0, 0.0


def measured_by_task(records: Iterable[AttemptRecord]) -> dict[str, list[Efficiency]]:
    """Per task, the `Efficiency` of each sample whose final attempt passed and was measured, in sample order."""
    by_task: dict[str, list[Efficiency]] = defaultdict(list)
    for s in group_samples(records):
        final = s.final
        if final is not None and final.passed and final.efficiency is not None:
            by_task[s.task_id].append(Efficiency.from_record(final.efficiency))
    return dict(by_task)


@dataclass(frozen=True)
class TaskEfficiency:
    """One task's efficiency over its measured passing samples (ratios None where none was measured)."""

    task_id: str
    passes: int  # passing samples that were measured (any status)
    measured: int  # of them, with both ratios
    instructions_ratio: float | None
    instructions_ratio_ci_low: float | None
    instructions_ratio_ci_high: float | None
    memory_ratio: float | None
    slow_passes: int
    lean_passes: int
    too_slow: int
    errors: int
    no_perf_inputs: int
    dps: float | None = None
    dps_norm: float | None = None
    samples_ratios: tuple[float, ...] = ()  # each measured sample's instruction ratio, for the report's figure

    def row(self) -> dict:
        """The task's columns for a task table (runner.results.scoring's `task_table`), named `efficiency_...`."""
        return {PREFIX + k: v for k, v in asdict(self).items() if k not in ("task_id", "samples_ratios")}


def task_efficiency(
    task_id: str,
    samples: Sequence[Efficiency],
    slow_ratio: float = 10.0,
    lean_ratio: float = 1.0,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> TaskEfficiency:
    """Score one task's measured samples (see the module docstring)."""
    measured = [e for e in samples if e.status == MEASURED and e.instructions_ratio and e.memory_ratio]
    ratios = [e.instructions_ratio for e in measured]
    graded = [dps(e.candidate, e.references, e.status == TOO_SLOW) for e in samples if e.references]
    graded = [g for g in graded if g is not None]
    low = high = geo = memory = None
    if ratios:
        geo, memory = geo_mean(ratios), geo_mean([e.memory_ratio for e in measured])
        low, high = geo_mean_ci(ratios, level, resamples, seed)
    status = [e.status for e in samples]
    return TaskEfficiency(
        task_id=task_id,
        passes=len(samples),
        measured=len(measured),
        instructions_ratio=geo,
        instructions_ratio_ci_low=low,
        instructions_ratio_ci_high=high,
        memory_ratio=memory,
        slow_passes=sum(r > slow_ratio for r in ratios) + status.count(TOO_SLOW),  # over budget >= slow_ratio
        lean_passes=sum(r <= lean_ratio for r in ratios),
        too_slow=status.count(TOO_SLOW),
        errors=status.count(ERROR),
        no_perf_inputs=status.count(NO_PERF_INPUTS),
        dps=sum(g[0] for g in graded) / len(graded) if graded else None,
        dps_norm=sum(g[1] for g in graded) / len(graded) if graded else None,
        samples_ratios=tuple(ratios),
    )


def task_scores(
    records: Iterable[AttemptRecord],
    slow_ratio: float = 10.0,
    lean_ratio: float = 1.0,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[TaskEfficiency]:
    """`task_efficiency` of every task with a measured passing sample, in task order."""
    return [
        task_efficiency(t, samples, slow_ratio, lean_ratio, level, resamples, seed)
        for t, samples in sorted(measured_by_task(records).items())
    ]


def efficiency_metrics(
    tasks: Sequence[TaskEfficiency], level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> dict[str, float]:
    """A job's efficiency metrics from its `task_scores` (empty when nothing was measured).

    `efficiency_instructions_ratio` (and `_memory_ratio`): the geometric mean over tasks of each task's
    geometric mean, with `_ci_low` / `_ci_high` (bootstrap over tasks) and `_tasks` (the tasks averaged);
    the sample counts `efficiency_passes` (passing samples measured), `_measured`, `_slow_passes`,
    `_lean_passes`, `_too_slow`, `_errors`, `_no_perf_inputs`; and where tasks list graded references,
    `efficiency_dps` / `efficiency_dps_norm` (EvalPerf's, mean over those tasks) with `efficiency_dps_tasks`.
    """
    if not tasks:
        return {}
    out: dict[str, float] = {}
    for name in ("passes", "measured", "slow_passes", "lean_passes", "too_slow", "errors", "no_perf_inputs"):
        out[PREFIX + name] = float(sum(getattr(t, name) for t in tasks))
    for name in ("instructions_ratio", "memory_ratio"):
        values = [getattr(t, name) for t in tasks if getattr(t, name) is not None]
        if values:
            key = PREFIX + name
            out[key] = geo_mean(values)
            out[f"{key}_ci_low"], out[f"{key}_ci_high"] = geo_mean_ci(values, level, resamples, seed)
            out[f"{key}_tasks"] = float(len(values))
    graded = [t for t in tasks if t.dps is not None]
    if graded:
        out[PREFIX + "dps"] = sum(t.dps for t in graded) / len(graded)
        out[PREFIX + "dps_norm"] = sum(t.dps_norm for t in graded) / len(graded)
        out[PREFIX + "dps_tasks"] = float(len(graded))
    return out


def paired_efficiency(
    records_a: Iterable[AttemptRecord],
    records_b: Iterable[AttemptRecord],
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Run A's instruction ratio against run B's among the tasks both solved with a measured sample.

    Per shared task the ratio of ratios (A's per-task geometric mean over B's: below 1, A's answers cost less);
    `efficiency_ratio` is their geometric mean with a bootstrap CI over the shared tasks
    (`efficiency_ratio_ci_low` / `_ci_high`), `efficiency_tasks` the tasks compared. Empty when no task is shared.
    """
    a = {t.task_id: t.instructions_ratio for t in task_scores(records_a) if t.instructions_ratio is not None}
    b = {t.task_id: t.instructions_ratio for t in task_scores(records_b) if t.instructions_ratio is not None}
    shared = sorted(set(a) & set(b))
    if not shared:
        return {}
    quotients = [a[t] / b[t] for t in shared]
    low, high = geo_mean_ci(quotients, level, resamples, seed)
    return {
        "efficiency_tasks": len(shared),
        "efficiency_ratio": geo_mean(quotients),
        "efficiency_ratio_ci_low": low,
        "efficiency_ratio_ci_high": high,
    }


def score_records(
    records: Sequence[AttemptRecord],
    slow_ratio: float = 10.0,
    lean_ratio: float = 1.0,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[dict[str, float], dict[str, dict]]:
    """A job's `efficiency_metrics` and, per task id, its `TaskEfficiency.row()` (both empty when none was measured)."""
    tasks = task_scores(records, slow_ratio, lean_ratio, level, resamples, seed)
    return efficiency_metrics(tasks, level, resamples, seed), {
        t.task_id: {"task_id": t.task_id, **t.row()} for t in tasks
    }
