"""Scoring: unbiased pass@k, bootstrap confidence intervals and outcome breakdowns.

Pure functions over `AttemptRecord` lists. A *sample* is one (task, sample) pair; its *first* record is
attempt 0 and its *repair* record is the one marked `final` (the outcome after the repair loop).
Samples whose record for a stage is unscored (`backend_error`, `harness_error`) are left out of that
stage's pass@k and counted apart, so a harness fault never counts as a model failure.

Metric names are valid MLflow keys. MLflow rejects "@" in metric names, so pass@k is spelled
`pass_at_<k>_<stage>[_<suites>]`, e.g. `pass_at_1_first`, `pass_at_1_repair_visible`.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.generation.sanitize import NOTE_PREFIX
from runner.outcome import Outcome
from runner.records import AttemptRecord
from runner.results.job_folder import natural_key

log = logging.getLogger(__name__)

STAGES = ("first", "repair")
"""`first`: attempt 0 of each sample; `repair`: the sample's final attempt."""

SUITE_LEVELS: dict[str, tuple[str, ...] | None] = {
    "visible": ("visible",),
    "visible_hidden": ("visible", "hidden"),
    "all": None,  # every suite, i.e. the attempt's outcome is `passed`
}
"""Suite levels, from lenient to strict (like EvalPlus's base vs plus). `all` is the main score."""

EVALPLUS_LEVELS: dict[str, tuple[str, ...]] = {
    "base": ("hidden",),
    "base_plus": ("hidden", "properties"),
}
"""EvalPlus's scores, for the EvalPlus task sets: `base` = the original tests (the hidden suite) passed,
`base_plus` (EvalPlus's "base+plus") = those and the plus inputs (the properties suite) passed."""

COMPLIANT = "compliant"
"""The strictest level: `all` passed and the gate found no violation (policy-compliant pass@k)."""

LEVELS = {**SUITE_LEVELS, **EVALPLUS_LEVELS, COMPLIANT: None}
DEFAULT_LEVELS = (*SUITE_LEVELS, COMPLIANT)
"""The levels every job scores; the EvalPlus task sets add EVALPLUS_LEVELS."""

UNSCORED = frozenset(o for o in Outcome if not o.scored)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k estimate 1 - C(n-c, k) / C(n, k) for c correct out of n samples.

    Computed in the numerically stable product form of the Codex paper (Chen et al., 2021).
    Raises ValueError when k > n (there is no estimate: do not invent one), c > n, or any is negative.
    """
    if n < 0 or c < 0 or k < 1:
        raise ValueError(f"pass_at_k needs n >= 0, c >= 0, k >= 1; got n={n}, c={c}, k={k}")
    if c > n:
        raise ValueError(f"pass_at_k: c={c} correct samples cannot exceed n={n} samples")
    if k > n:
        raise ValueError(f"pass_at_k: k={k} exceeds the n={n} samples; pass@{k} is undefined here")
    if n - c < k:
        return 1.0
    import numpy as np

    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def metric_key(k: int, stage: str, level: str | None = None) -> str:
    """MLflow-safe name of a pass@k metric, e.g. `pass_at_1_first` or `pass_at_1_repair_visible`."""
    return f"pass_at_{k}_{stage}" + (f"_{level}" if level else "")


@dataclass(frozen=True)
class SampleAttempts:
    """One (task, sample) pair of a job: its first attempt and its final attempt (None when missing)."""

    task_id: str
    sample: int
    first: AttemptRecord | None
    final: AttemptRecord | None
    attempts: int

    def record(self, stage: str) -> AttemptRecord | None:
        """The record that decides `stage` ("first" or "repair")."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r}; use one of {STAGES}")
        return self.first if stage == "first" else self.final


def group_samples(records: Iterable[AttemptRecord]) -> list[SampleAttempts]:
    """Group attempt records into samples, sorted by (task, sample).

    A repeated (task, sample, attempt) keeps its last record (a resumed run appends). A sample
    without a `final` record is incomplete: its repair stage is missing, not guessed.
    """
    by_sample: dict[tuple[str, int], dict[int, AttemptRecord]] = defaultdict(dict)
    for r in records:
        by_sample[(r.task_id, r.sample)][r.attempt] = r
    samples = []
    for (task_id, sample), attempts in sorted(by_sample.items()):
        finals = [attempts[a] for a in sorted(attempts) if attempts[a].final]
        samples.append(SampleAttempts(task_id, sample, attempts.get(0), finals[-1] if finals else None, len(attempts)))
    return samples


def is_scored(record: AttemptRecord | None) -> bool:
    """True when the record exists and its outcome counts for or against the model."""
    return record is not None and record.outcome.scored


def passed_at_level(record: AttemptRecord, level: str = "all") -> bool:
    """Whether the record passed the suites of `level` (see SUITE_LEVELS and EVALPLUS_LEVELS).

    `all` means the attempt's outcome is `passed`; `compliant` that it passed with no gate violation.
    A lower level passes when every one of its suites that ran passed and at least one of them ran;
    an attempt stopped before any suite ran fails.
    """
    if level == COMPLIANT:
        return record.compliant
    suites = LEVELS[level]
    if record.outcome is Outcome.PASSED or suites is None:
        return record.outcome is Outcome.PASSED
    ran = [record.suites[s] for s in suites if s in record.suites]
    return bool(ran) and all(ran)


def task_counts(samples: Sequence[SampleAttempts], stage: str, level: str = "all") -> dict[str, tuple[int, int]]:
    """Per task: (n scored samples, c passing samples) for one stage and suite level."""
    counts: dict[str, list[int]] = {}
    for s in samples:
        rec = s.record(stage)
        if not is_scored(rec):
            continue
        n_c = counts.setdefault(s.task_id, [0, 0])
        n_c[0] += 1
        n_c[1] += int(passed_at_level(rec, level))
    return {t: (n, c) for t, (n, c) in counts.items()}


def per_task_pass_at_k(counts: dict[str, tuple[int, int]], k: int) -> dict[str, float]:
    """pass@k of each task that has at least k scored samples (others have no estimate)."""
    return {t: pass_at_k(n, c, k) for t, (n, c) in sorted(counts.items()) if n >= k}


def bootstrap_ci(
    per_task_values: Sequence[float], level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean over tasks: resample tasks with replacement, seeded."""
    import numpy as np

    values = np.asarray(per_task_values, dtype=float)
    if values.size == 0:
        raise ValueError("bootstrap_ci needs at least one per-task value")
    if not 0.0 < level < 1.0:
        raise ValueError(f"bootstrap_ci: level must be in (0, 1), got {level}")
    if resamples < 1:
        raise ValueError(f"bootstrap_ci: resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    block = max(1, 2_000_000 // values.size)  # bound memory for large task sets
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        idx = rng.integers(0, values.size, size=(stop - start, values.size))
        means[start:stop] = values[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _outcome_metrics(samples: Sequence[SampleAttempts], stage: str) -> dict[str, float]:
    present = [s.record(stage) for s in samples if s.record(stage) is not None]
    counts = Counter(r.outcome for r in present)
    out: dict[str, float] = {}
    for outcome in sorted(Outcome):
        out[f"outcome_{stage}_{outcome.value}_count"] = float(counts[outcome])
        if present:  # rates are over every sample with a record for the stage, unscored included
            out[f"outcome_{stage}_{outcome.value}_rate"] = counts[outcome] / len(present)
    out[f"gate_rejections_{stage}"] = float(counts[Outcome.POLICY_REJECTED])
    out[f"gate_violations_reported_{stage}"] = float(sum(bool(r.violations) for r in present))
    out[f"extraction_changed_{stage}"] = float(sum(bool(r.extraction) for r in present))
    out[f"answers_sanitized_{stage}"] = float(sum(_sanitized(r) for r in present))
    out[f"answers_at_token_limit_{stage}"] = float(sum(r.finish_reason == "length" for r in present))
    out[f"test_failures_{stage}"] = float(counts[Outcome.FAILED])
    out[f"unscored_samples_{stage}"] = float(sum(counts[u] for u in UNSCORED))
    out[f"flaky_verdicts_{stage}"] = float(sum(r.flaky for r in present))  # judging.repeats > 1 only
    return out


def _sanitized(record: AttemptRecord) -> bool:
    return any(note.startswith(NOTE_PREFIX) for note in record.extraction)


def _repair_metrics(samples: Sequence[SampleAttempts]) -> dict[str, float]:
    attempted = [
        s
        for s in samples
        if is_scored(s.first)
        and not s.first.passed
        and s.final is not None
        and s.final.attempt > 0
        and is_scored(s.final)
    ]
    fixed = sum(s.final.passed for s in attempted)
    out = {"repair_attempted": float(len(attempted)), "repair_fixed": float(fixed)}
    if attempted:
        out["repair_success_rate"] = fixed / len(attempted)
    return out


def _generation_metrics(records: Sequence[AttemptRecord]) -> dict[str, float]:
    import numpy as np

    if not records:
        return {}
    return {
        "attempts": float(len(records)),
        "prompt_tokens_mean": float(np.mean([r.prompt_tokens for r in records])),
        "completion_tokens_mean": float(np.mean([r.completion_tokens for r in records])),
        "completion_tokens_total": float(sum(r.completion_tokens for r in records)),
        "test_s_mean": float(np.mean([r.test_s for r in records])),
        # a generation served from the cache carries the time it took when it was made
        "generation_s_mean": float(np.mean([r.generation_s for r in records])),
    }


def summarize(
    records: Sequence[AttemptRecord],
    ks: Sequence[int] = (1,),
    ci_level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    levels: Sequence[str] = DEFAULT_LEVELS,
) -> dict[str, float]:
    """Flat metrics of one run, every name a valid MLflow metric key.

    For each k, stage (first, repair) and suite level: `pass_at_<k>_<stage>_<level>` with `_ci_low`
    / `_ci_high` (bootstrap over tasks) and `_tasks` (tasks with >= k scored samples, which are the
    ones averaged); `pass_at_<k>_<stage>` is the `all` level. A k no task has enough samples for is
    left out (see `scoring_notes`). `levels` names the levels scored (of LEVELS; the EvalPlus task sets
    add EVALPLUS_LEVELS). The `compliant` level (`pass_at_<k>_<stage>_compliant`) is the
    policy-compliant pass@k: passed with no gate violation (equal to `all` in enforce mode). Also
    attempts whose violations were only reported, attempts whose extraction changed the code block,
    per-outcome counts and rates per stage, repair success,
    gate rejections apart from test failures, unscored/incomplete samples, and generation means.
    """
    import numpy as np

    records = list(records)
    samples = group_samples(records)
    metrics: dict[str, float] = {
        "tasks": float(len({s.task_id for s in samples})),
        "samples": float(len(samples)),
        "incomplete_samples": float(sum(s.first is None or s.final is None for s in samples)),
        "unscored_samples": float(
            sum(any(r is not None and not is_scored(r) for r in (s.first, s.final)) for s in samples)
        ),
    }
    for stage in STAGES:
        for level in levels:
            counts = task_counts(samples, stage, level)
            for k in ks:
                values = per_task_pass_at_k(counts, k)
                if not values:
                    continue
                low, high = bootstrap_ci(list(values.values()), ci_level, resamples, seed)
                names = [metric_key(k, stage, level)] + ([metric_key(k, stage)] if level == "all" else [])
                for name in names:
                    metrics[name] = float(np.mean(list(values.values())))
                    metrics[f"{name}_ci_low"] = low
                    metrics[f"{name}_ci_high"] = high
                    metrics[f"{name}_tasks"] = float(len(values))
        metrics.update(_outcome_metrics(samples, stage))
    metrics.update(_repair_metrics(samples))
    metrics.update(_generation_metrics(records))
    if metrics["unscored_samples"]:
        log.warning(
            "%d of %d samples have unscored outcomes (backend/harness errors) and are excluded "
            "from pass@k; see unscored_samples_first / unscored_samples_repair",
            int(metrics["unscored_samples"]),
            len(samples),
        )
    return metrics


def scoring_notes(records: Sequence[AttemptRecord], ks: Sequence[int] = (1,)) -> list[str]:
    """Human-readable notes on what `summarize` had to leave out, and why."""
    samples = group_samples(records)
    notes = []
    for stage in STAGES:
        unscored = [s for s in samples if s.record(stage) is not None and not is_scored(s.record(stage))]
        if unscored:
            kinds = Counter(s.record(stage).outcome.value for s in unscored)
            detail = ", ".join(f"{n} {o}" for o, n in sorted(kinds.items()))
            notes.append(f"{stage}: {len(unscored)} unscored sample(s) excluded from pass@k ({detail})")
        counts = task_counts(samples, stage)
        all_tasks = {s.task_id for s in samples}
        if len(counts) < len(all_tasks):
            notes.append(f"{stage}: {len(all_tasks) - len(counts)} task(s) have no scored sample at all")
        for k in ks:
            short = sorted(t for t, (n, _) in counts.items() if n < k)
            if short and len(short) == len(counts):
                notes.append(f"{stage}: pass@{k} skipped: no task has {k} scored samples")
            elif short:
                notes.append(
                    f"{stage}: pass@{k} averages {len(counts) - len(short)} tasks; {len(short)} task(s) "
                    f"have fewer than {k} scored samples: {', '.join(short[:10])}"
                )
    incomplete = [s for s in samples if s.first is None or s.final is None]
    if incomplete:
        notes.append(f"{len(incomplete)} sample(s) lack attempt 0 or a final attempt (interrupted run?)")
    return notes


def _mode(values: Iterable[str]) -> str:
    counts = Counter(values)
    if not counts:
        return ""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def _breakdown(outcomes: list[str]) -> str:
    """The one outcome, or each outcome with its count in sample order: `passed×2, failed×1`."""
    if len(outcomes) == 1:
        return outcomes[0]
    return ", ".join(f"{o}×{n}" for o, n in Counter(outcomes).items())


def task_table(records: Sequence[AttemptRecord], audit: dict[str, float] | None = None) -> list[dict]:
    """One row per task in natural order (HumanEval/2 before HumanEval/10), for the job summary, the MLflow
    `tasks.json` table and the report's heat map.

    Per stage (first, repair): scored, passing and policy-compliant sample counts, the pass rate over
    scored samples (None when none is scored), the typical outcome (`outcome_<stage>`, the most common)
    and every outcome with its count (`outcomes_<stage>`). Also the attempts made, those of them that were
    repairs, and the task's latest mutation-audit score from `audit` (None when not audited).
    """
    by_task: dict[str, list[SampleAttempts]] = defaultdict(list)
    for s in group_samples(records):
        by_task[s.task_id].append(s)
    rows = []
    for task_id, samples in sorted(by_task.items(), key=lambda item: natural_key(item[0])):
        row: dict = {"task_id": task_id, "samples": len(samples)}
        for stage in STAGES:
            recs = [s.record(stage) for s in samples if s.record(stage) is not None]
            scored = [r for r in recs if is_scored(r)]
            row[f"scored_{stage}"] = len(scored)
            row[f"passed_{stage}"] = sum(r.passed for r in scored)
            row[f"compliant_{stage}"] = sum(r.compliant for r in scored)
            row[f"pass_rate_{stage}"] = row[f"passed_{stage}"] / len(scored) if scored else None
            row[f"outcome_{stage}"] = _mode(r.outcome.value for r in recs)
            row[f"outcomes_{stage}"] = _breakdown([r.outcome.value for r in recs])
        row["attempts"] = sum(s.attempts for s in samples)
        row["repair_attempts"] = sum(max(0, s.attempts - 1) for s in samples)
        row["audit_score"] = (audit or {}).get(task_id)
        rows.append(row)
    return rows
