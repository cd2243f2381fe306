"""Comparing runs: paired model comparison (bootstrap CI + exact McNemar) and seed-to-seed spread.

Two runs are compared only on what both scored: the (task, sample) pairs present and scored in both.
The difference in pass rate gets a paired bootstrap CI (resampling tasks, each task keeping its pair),
and the discordant pairs get an exact McNemar test, so "92.1 vs 92.6" is reported as what it is.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from runner.records import AttemptRecord
from runner.results.efficiency_scores import paired_efficiency
from runner.results.job_folder import Job, natural_key
from runner.results.noise import paired_variances, standard_errors
from runner.results.scoring import bootstrap_ci, group_samples, is_scored, per_task_pass_at_k, task_counts
from runner.results.verdicts import NO_DIFFERENCE, verdict


def mcnemar_p(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: binomial test of min(b, c) on b + c trials with p = 1/2."""
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_p needs non-negative counts, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def _outcomes(records: Sequence[AttemptRecord], stage: str) -> dict[tuple[str, Hashable], bool]:
    """Each scored sample's outcome at `stage`, keyed (task, sample)."""
    out = {}
    for s in group_samples(records):
        rec = s.record(stage)
        if is_scored(rec):
            out[(s.task_id, s.sample)] = rec.passed
    return out


def _pooled_outcomes(runs: Mapping[int, Sequence[AttemptRecord]], stage: str) -> dict[tuple[str, Hashable], bool]:
    """The scored outcomes of several seeds' runs of one model as one run: keyed (task, (seed, sample))."""
    return {
        (task, (seed, sample)): v for seed, recs in runs.items() for (task, sample), v in _outcomes(recs, stage).items()
    }


def _task_counts(outcomes: Mapping[tuple[str, Hashable], bool]) -> dict[str, tuple[int, int]]:
    """Per task: (scored samples, passing samples)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (task, _), passed in outcomes.items():
        counts[task][0] += 1
        counts[task][1] += int(passed)
    return {t: (n, c) for t, (n, c) in counts.items()}


VERDICT_FIELDS = ("k_a", "k_b", "diff", "se_diff", "se_single", "se_data", "se_prediction", "mde", "p", "verdict")
"""What `compare_outcomes` adds to a comparison beside McNemar's counts (also when no task is shared: None)."""


def samples_per_task(k: np.ndarray) -> int | float:
    """The samples per task of a comparison's side: an int when every task has as many, else their mean."""
    return int(k[0]) if np.all(k == k[0]) else round(float(k.mean()), 2)


def compare_outcomes(
    a: Mapping[tuple[str, Hashable], bool], b: Mapping[tuple[str, Hashable], bool], stage: str, level: float = 0.95
) -> dict:
    """Paired comparison of A against B (scored outcomes keyed (task, sample)) on the tasks both scored.

    Each task's pass rate is over every sample its run scored (`k_a`, `k_b` samples per task); the verdict is
    runner.results.verdicts.verdict on the per-task differences (`diff` = a - b with `se_diff`, the t-interval
    `diff_ci_low` / `diff_ci_high`, `p`, `mde`, `verdict`) and the noise split is eval-arena's paired one
    (runner.results.noise: `se_single`, `se_data`, `se_prediction`). Also `pass_rate_a` / `pass_rate_b` (mean
    over tasks), and McNemar on the (task, sample) pairs both scored: `pairs`, `b` (A passed, B failed), `c`
    (A failed, B passed), `mcnemar_p`, and `only_a` / `only_b` (pairs scored in one run only). McNemar treats
    samples of one task as independent, so with several samples per task it is anti-conservative; `p` is not.
    """
    shared = sorted(set(a) & set(b), key=str)
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
    counts_a, counts_b = _task_counts(a), _task_counts(b)
    tasks = sorted(set(counts_a) & set(counts_b), key=natural_key)
    result["tasks"] = len(tasks)
    if not tasks:  # nothing to compare: the verdict's fields are there, empty
        return {**result, **dict.fromkeys(VERDICT_FIELDS), "verdict": NO_DIFFERENCE}
    ka, kb = (np.array([counts[t][0] for t in tasks], dtype=float) for counts in (counts_a, counts_b))
    rate_a = np.array([counts_a[t][1] for t in tasks]) / ka
    rate_b = np.array([counts_b[t][1] for t in tasks]) / kb
    result["pass_rate_a"] = float(rate_a.mean())
    result["pass_rate_b"] = float(rate_b.mean())
    result["k_a"], result["k_b"] = samples_per_task(ka), samples_per_task(kb)
    result.update(verdict(rate_a - rate_b, level))
    result.update(standard_errors(paired_variances(rate_a, rate_b, ka, kb), len(tasks)))
    return result


def paired_compare(
    records_a: Sequence[AttemptRecord], records_b: Sequence[AttemptRecord], stage: str = "repair", level: float = 0.95
) -> dict:
    """Paired comparison of run A against run B at `stage` on the tasks both scored (see `compare_outcomes`)."""
    return compare_outcomes(_outcomes(records_a, stage), _outcomes(records_b, stage), stage, level)


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


def _compare_runs(ja: Job, jb: Job, names: dict) -> list[dict]:
    """Both stages of one job against another (the `repair` one with paired efficiency), or the refusal."""
    from runner.results.dataset_record import dataset_mismatch

    refused = dataset_mismatch(ja.path, jb.path)
    if refused:
        return [{**names, "refused": refused}]
    results = []
    for stage in ("first", "repair"):
        r = paired_compare(ja.records, jb.records, stage, ja.ci_level)
        if stage == "repair":  # the final attempts are the ones measured (runner.efficiency)
            r.update(paired_efficiency(ja.records, jb.records, ja.ci_level, ja.resamples, ja.boot_seed))
        results.append({**r, **names})
    return results


def _compare_pooled(runs_a: dict[int, Job], runs_b: dict[int, Job], names: dict) -> list[dict]:
    """Both stages of model A against model B, each model's seeds pooled into one run (seeds only add samples)."""
    from runner.results.dataset_record import dataset_mismatch

    first = next(iter(runs_a.values()))
    for j in (*runs_a.values(), *runs_b.values()):
        refused = dataset_mismatch(first.path, j.path)
        if refused:
            return [{**names, "refused": refused}]
    results = []
    for stage in ("first", "repair"):
        a = _pooled_outcomes({s: j.records for s, j in runs_a.items()}, stage)
        b = _pooled_outcomes({s: j.records for s, j in runs_b.items()}, stage)
        results.append({**compare_outcomes(a, b, stage, first.ci_level), **names})
    return results


def _names(model_a, model_b, seed_a, seed_b, job_a, job_b, task_set) -> dict:
    return dict(
        model_a=model_a, model_b=model_b, seed_a=seed_a, seed_b=seed_b, job_a=job_a, job_b=job_b, task_set=task_set
    )


def compare_jobs(jobs: Sequence[Job]) -> list[dict]:
    """Paired comparisons on each task set (runs on different sets are not paired), both stages:

    - every two models, seed by seed on the seeds both have (or their lowest seeds if they share none);
    - every two models with their seeds pooled, when one of them has several seeds (`seed_a` / `seed_b` are then
      the lists of seeds pooled and `job_a` / `job_b` the models' names);
    - every two seeds of one model (`model_a` == `model_b`): a check of the harness and of the test itself, whose
      verdict should be no_detectable_difference.

    Each result is `compare_outcomes`'s dict plus `model_a`, `model_b`, `seed_a`, `seed_b`, `job_a`, `job_b` (the
    job folders' names, or the models' where seeds are pooled) and `task_set`; a per-seed `repair` one also
    `paired_efficiency`'s keys (runner.results.efficiency_scores) where both measured a shared task. Two runs
    whose dataset records differ (runner.results.dataset_record: other tasks or another release under the same
    task set name) are not paired: their result holds only those keys and `refused`, a one-line reason.
    """
    by_set: dict[str, dict[str, dict[int, Job]]] = defaultdict(lambda: defaultdict(dict))
    for j in jobs:
        by_set[j.task_set][j.model].setdefault(j.seed, j)
    results = []
    for task_set, by_model in by_set.items():
        for model_a, model_b in itertools.combinations(by_model, 2):
            runs_a, runs_b = by_model[model_a], by_model[model_b]
            seeds = sorted(set(runs_a) & set(runs_b))
            for seed_a, seed_b in [(s, s) for s in seeds] or [(min(runs_a), min(runs_b))]:
                ja, jb = runs_a[seed_a], runs_b[seed_b]
                names = _names(model_a, model_b, seed_a, seed_b, ja.path.name, jb.path.name, task_set)
                results += _compare_runs(ja, jb, names)
            if len(runs_a) > 1 or len(runs_b) > 1:
                names = _names(model_a, model_b, sorted(runs_a), sorted(runs_b), model_a, model_b, task_set)
                results += _compare_pooled(dict(sorted(runs_a.items())), dict(sorted(runs_b.items())), names)
        for model, runs in by_model.items():
            for seed_a, seed_b in itertools.combinations(sorted(runs), 2):
                ja, jb = runs[seed_a], runs[seed_b]
                names = _names(model, model, seed_a, seed_b, ja.path.name, jb.path.name, task_set)
                results += _compare_runs(ja, jb, names)
    return results


def is_seed_check(r: dict) -> bool:
    """Whether comparison `r` (compare_jobs) is two seeds of one model."""
    return r["model_a"] == r["model_b"]


def is_pooled(r: dict) -> bool:
    """Whether comparison `r` (compare_jobs) pools each model's seeds."""
    return isinstance(r["seed_a"], list)


def seeds_label(r: dict) -> str:
    """The seeds of comparison `r` in words: `seed 1`, `seeds 1 vs 2`, `seeds 1+2 vs 1+2 pooled`."""
    if is_pooled(r):
        return "seeds " + " vs ".join("+".join(map(str, r[k])) for k in ("seed_a", "seed_b")) + " pooled"
    return f"seed {r['seed_a']}" if r["seed_a"] == r["seed_b"] else f"seeds {r['seed_a']} vs {r['seed_b']}"
