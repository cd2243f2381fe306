"""Comparing runs: paired model comparison (bootstrap CI + exact McNemar) and seed-to-seed spread.

Two runs are compared only on what both scored: the (task, sample) pairs present and scored in both.
The difference in pass rate gets a paired bootstrap CI (resampling tasks, each task keeping its pair),
and the discordant pairs get an exact McNemar test, so "92.1 vs 92.6" is reported as what it is.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from runner.records import AttemptRecord
from runner.results.efficiency_scores import paired_efficiency
from runner.results.job_folder import Job
from runner.results.scoring import bootstrap_ci, group_samples, is_scored, per_task_pass_at_k, task_counts


def mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: binomial test of min(b, c) on b + c trials with p = 1/2."""
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_p needs non-negative counts, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def _outcomes(records: Sequence[AttemptRecord], stage: str) -> dict[tuple[str, int], bool]:
    out = {}
    for s in group_samples(records):
        rec = s.record(stage)
        if is_scored(rec):
            out[(s.task_id, s.sample)] = rec.passed
    return out


def paired_compare(
    records_a: Sequence[AttemptRecord],
    records_b: Sequence[AttemptRecord],
    stage: str = "repair",
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Paired comparison of run A against run B on the (task, sample) pairs both scored.

    Returns `tasks` and `pairs` compared, `pass_rate_a` / `pass_rate_b` (mean over tasks of the
    per-task pass rate), `diff` = a - b with a paired bootstrap CI (`diff_ci_low`, `diff_ci_high`),
    `b` (A passed, B failed) and `c` (A failed, B passed) discordant counts, the exact McNemar
    two-sided `mcnemar_p`, and `only_a` / `only_b`: pairs scored in one run only (left out).
    With several samples per task McNemar treats pairs as independent; the bootstrap CI, which
    resamples whole tasks, does not.
    """
    a, b = _outcomes(records_a, stage), _outcomes(records_b, stage)
    shared = sorted(set(a) & set(b))
    result = {
        "stage": stage,
        "ci_level": level,
        "pairs": len(shared),
        "only_a": len(set(a) - set(b)),
        "only_b": len(set(b) - set(a)),
        "b": sum(a[key] and not b[key] for key in shared),
        "c": sum(b[key] and not a[key] for key in shared),
    }
    result["mcnemar_p"] = mcnemar_p(result["b"], result["c"])
    by_task: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for key in shared:
        by_task[key[0]].append((a[key], b[key]))
    result["tasks"] = len(by_task)
    if not by_task:
        return result
    rate_a = np.array([np.mean([p[0] for p in pairs]) for pairs in by_task.values()])
    rate_b = np.array([np.mean([p[1] for p in pairs]) for pairs in by_task.values()])
    diffs = rate_a - rate_b
    result["pass_rate_a"] = float(rate_a.mean())
    result["pass_rate_b"] = float(rate_b.mean())
    result["diff"] = float(diffs.mean())
    result["diff_ci_low"], result["diff_ci_high"] = bootstrap_ci(list(diffs), level, resamples, seed)
    return result


def seed_spread(
    runs_by_seed: Mapping[int, Sequence[AttemptRecord]],
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Seed-to-seed spread of pass@1 (first and after repair), apart from task-to-task spread.

    For each stage: `<stage>_per_seed` {seed: pass@1}, `<stage>_mean`, `<stage>_std` (sample
    standard deviation across seeds; None with fewer than two seeds), `<stage>_min`, `<stage>_max`,
    and `<stage>_ci_width_mean`: the mean width of each seed's bootstrap CI over tasks, i.e. the
    task-to-task uncertainty within one seed.
    """
    result: dict = {"seeds": len(runs_by_seed)}
    for stage in ("first", "repair"):
        values, widths = {}, []
        for run_seed, records in sorted(runs_by_seed.items()):
            per_task = per_task_pass_at_k(task_counts(group_samples(records), stage), 1)
            if not per_task:
                continue
            values[run_seed] = float(np.mean(list(per_task.values())))
            low, high = bootstrap_ci(list(per_task.values()), level, resamples, seed)
            widths.append(high - low)
        result[f"{stage}_per_seed"] = values
        if not values:
            continue
        arr = np.array(list(values.values()))
        result[f"{stage}_mean"] = float(arr.mean())
        result[f"{stage}_std"] = float(arr.std(ddof=1)) if arr.size > 1 else None
        result[f"{stage}_min"] = float(arr.min())
        result[f"{stage}_max"] = float(arr.max())
        result[f"{stage}_ci_width_mean"] = float(np.mean(widths))
    return result


def compare_jobs(jobs: Sequence[Job]) -> list[dict]:
    """Paired comparisons of every two models on the same task set, both stages (runs on different sets are
    not paired).

    Each model's runs are paired seed by seed on the seeds both have, or their lowest seeds if they share
    none. Each result is `paired_compare`'s dict plus `model_a`, `model_b`, `seed_a`, `seed_b`, `task_set`; the
    `repair` one also `paired_efficiency`'s keys (runner.results.efficiency_scores) where both measured a shared task.
    Two runs whose dataset records differ (runner.results.dataset_record: other tasks or another release under the
    same task set name) are not paired: their result holds only those keys and `refused`, a one-line reason.
    """
    from runner.results.dataset_record import dataset_mismatch

    by_set: dict[str, dict[str, dict[int, Job]]] = defaultdict(lambda: defaultdict(dict))
    for j in jobs:
        by_set[j.task_set][j.model].setdefault(j.seed, j)
    results = []
    for task_set, by_model in by_set.items():
        for model_a, model_b in itertools.combinations(by_model, 2):
            seeds = sorted(set(by_model[model_a]) & set(by_model[model_b]))
            pairs = [(s, s) for s in seeds] or [(min(by_model[model_a]), min(by_model[model_b]))]
            for seed_a, seed_b in pairs:
                ja, jb = by_model[model_a][seed_a], by_model[model_b][seed_b]
                names = dict(model_a=model_a, model_b=model_b, seed_a=seed_a, seed_b=seed_b, task_set=task_set)
                refused = dataset_mismatch(ja.path, jb.path)
                if refused:
                    results.append({**names, "refused": refused})
                    continue
                for stage in ("first", "repair"):
                    r = paired_compare(ja.records, jb.records, stage, ja.ci_level, ja.resamples, ja.boot_seed)
                    if stage == "repair":  # the final attempts are the ones measured (runner.efficiency)
                        r.update(paired_efficiency(ja.records, jb.records, ja.ci_level, ja.resamples, ja.boot_seed))
                    r.update(names)
                    results.append(r)
    return results
