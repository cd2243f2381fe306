"""`python -m runner.plan`: before a run, the smallest difference it could detect, for a grid of samples per task x
seeds, and the samples needed for a difference you name.

    python -m runner.plan task_set=humanevalplus [pass_rate=0.5] [correlation=0.5] [data_share=0.5] [diff=0.03]
    python -m runner.plan from=multirun/2026-12-07/12-00-00 [task_set=humanevalplus] [diff=0.03]

The noise of a comparison of two models paired over N tasks (runner.results.noise, Wang 2025) is the data noise
of the difference, var(E(A-B)), which only more tasks shrink, plus each model's prediction noise E(var(A)) over
its samples per task, which more samples (or seeds: a seed only draws more samples) shrink. The minimum detectable
difference at 80% power is (t_{1-alpha/2} + t_{0.8}) * sqrt((var(E(A-B)) + (E(var(A)) + E(var(B))) / K) / N) for
K samples per task in all (runner.results.verdicts, checked by simulation in tests/test_verdicts.py).

From a job or sweep folder (`from=`), both parts are measured: the first two models' per-task rates (all their
seeds pooled, after repair), or one model's with B assumed alike at `correlation`. Without a folder they follow
from assumptions: both models' `pass_rate` p, the share of a sample's variance p(1-p) that lies between tasks
(`data_share`; the rest is prediction noise), and the `correlation` between the models' per-task rates. N is the
task set's size (its ids/limit applied), or the folder's tasks when no task set is named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from runner.cli import Option, UsageError, parse_args
from runner.results.verdicts import mde_factor


def _ints(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or min(values) < 1:
        raise ValueError(text)
    return values


OPTIONS = (
    Option("from", "a job or sweep folder whose per-task rates give the noise", metavar="FOLDER"),
    Option("pass_rate", "assumed pass rate of both models (without from=)", type=float, default=0.5, metavar="P"),
    Option(
        "correlation", "assumed correlation of the two models' per-task rates", type=float, default=0.5, metavar="R"
    ),  # fmt: skip
    Option(
        "data_share", "assumed share of p(1-p) that is data noise (without from=)", type=float, default=0.5, metavar="S"
    ),  # fmt: skip
    Option(
        "diff", "a difference to detect, as a fraction (0.03 = 3 points): the samples it needs", type=float, metavar="D"
    ),  # fmt: skip
    Option(
        "samples",
        "samples per task to tabulate",
        type=_ints,
        default=[1, 2, 3, 5, 10, 20],
        metavar="LIST",
        default_text="1,2,3,5,10,20",
    ),  # fmt: skip
    Option("seeds", "seeds to tabulate", type=_ints, default=[1, 2, 3, 5], metavar="LIST", default_text="1,2,3,5"),
    Option("level", "the verdict's level", type=float, default_text="scoring.ci_level", metavar="L"),
)


@dataclass(frozen=True)
class Noise:
    """Per-sample variances of a paired comparison: `data` = var(E(A-B)), `prediction_a` / `_b` = E(var(.))."""

    data: float
    prediction_a: float
    prediction_b: float
    source: str

    def variance(self, k: float) -> float:
        """var(rate_A - rate_B) of one task at k samples per task for each model."""
        return self.data + (self.prediction_a + self.prediction_b) / k


def assumed_noise(pass_rate: float, correlation: float, data_share: float) -> Noise:
    """Both models at `pass_rate`, `data_share` of p(1-p) between tasks, per-task rates correlated `correlation`."""
    for name, v in (("pass_rate", pass_rate), ("correlation", correlation), ("data_share", data_share)):
        if not 0 <= v <= 1:
            raise UsageError(f"runner.plan: {name}={v} must be between 0 and 1")
    total = pass_rate * (1 - pass_rate)
    data = data_share * total
    return Noise(
        2 * data * (1 - correlation),
        total - data,
        total - data,
        f"assumed: pass rate {pass_rate:g}, data share {data_share:g}, correlation {correlation:g}",
    )


def _prediction(p: np.ndarray, k: np.ndarray) -> float:
    """E(var(A)) per sample, unbiased in k: mean(p(1-p) k/(k-1)) (eval-arena's E_var with its bias term)."""
    return float(np.mean(p * (1 - p) * k / (k - 1)))


def measured_noise(folder: str, correlation: float) -> tuple[Noise, int]:
    """The noise measured in a job or sweep folder, and its number of tasks (see the module docstring)."""
    from pathlib import Path

    from runner.results.job_folder import find_job_dirs, load_job
    from runner.results.stability import pooled_counts

    dirs = find_job_dirs([Path(folder)])
    if not dirs:
        raise UsageError(f"runner.plan: from={folder}: no job folder there (a job folder holds attempts.jsonl)")
    by_model: dict[str, list] = {}
    for job in map(load_job, dirs):
        by_model.setdefault(job.model, []).append(job.records)
    counts = {model: pooled_counts(runs) for model, runs in by_model.items()}
    models = sorted(counts, key=lambda m: -len(counts[m]))[:2]
    tasks = sorted(set.intersection(*(set(counts[m]) for m in models)))
    if len(tasks) < 2:
        raise UsageError(f"runner.plan: from={folder}: fewer than two tasks scored; nothing to measure")
    k = {m: np.array([counts[m][t][0] for t in tasks], dtype=float) for m in models}
    p = {m: np.array([counts[m][t][1] for t in tasks], dtype=float) / k[m] for m in models}
    if any(np.any(k[m] < 2) for m in models):
        raise UsageError(
            f"runner.plan: from={folder}: some task has one sample only, so data and prediction noise cannot be "
            "told apart; plan from a run with sampling.n >= 2 (or two seeds), or from assumptions"
        )
    a = models[0]
    pred_a = _prediction(p[a], k[a])
    bias_a = float(np.mean(p[a] * (1 - p[a]) / (k[a] - 1)))
    if len(models) == 1:
        data_a = max(0.0, float(np.var(p[a])) - bias_a)
        return Noise(2 * data_a * (1 - correlation), pred_a, pred_a, f"measured: {a}, B assumed alike at "
                     f"correlation {correlation:g}"), len(tasks)  # fmt: skip
    b = models[1]
    bias_b = float(np.mean(p[b] * (1 - p[b]) / (k[b] - 1)))
    data = max(0.0, float(np.var(p[a] - p[b])) - bias_a - bias_b)
    return Noise(data, pred_a, _prediction(p[b], k[b]), f"measured: {a} vs {b}"), len(tasks)


def mde(noise: Noise, n: int, k: float, level: float) -> float:
    """The minimum detectable difference (80% power) over n tasks at k samples per task in all."""
    return mde_factor(level, n) * math.sqrt(noise.variance(k) / n)


def samples_needed(noise: Noise, n: int, diff: float, level: float) -> int | None:
    """The fewest samples per task (seeds x samples) whose MDE is at most `diff`; None when no number does."""
    room = n * (diff / mde_factor(level, n)) ** 2 - noise.data
    if room <= 0:
        return None
    return max(1, math.ceil((noise.prediction_a + noise.prediction_b) / room))


def tasks_needed(noise: Noise, diff: float, level: float) -> int:
    """The fewest tasks whose MDE reaches `diff` with unlimited samples (data noise alone)."""

    def reaches(n: int) -> bool:
        return mde_factor(level, n) * math.sqrt(noise.data / n) <= diff

    low, high = 2, 4
    while not reaches(high):
        low, high = high, high * 2
    while high - low > 1:  # reaches(high) and, unless low == 2, not reaches(low)
        mid = (low + high) // 2
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return low if reaches(low) else high


def plan_lines(
    noise: Noise, n: int, samples: list[int], seeds: list[int], level: float, diff: float | None
) -> list[str]:
    """The planner's Markdown: its inputs, the MDE table (points) and, for `diff`, the samples it needs."""
    lines = [
        f"{n} tasks, {noise.source}; per sample: data noise var(E(A-B)) {noise.data:.4f}, prediction noise "
        f"E(var(A)) {noise.prediction_a:.4f}, E(var(B)) {noise.prediction_b:.4f}.",
        "",
        f"Minimum detectable difference (points; {level:.0%} level, 80% power, paired over tasks):",
        "",
        "| samples per task | " + " | ".join(f"{s} seed(s)" for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for k in samples:
        lines.append(f"| {k} | " + " | ".join(f"{100 * mde(noise, n, k * s, level):.1f}" for s in seeds) + " |")
    floor = mde_factor(level, n) * math.sqrt(noise.data / n)
    lines += ["", f"A seed only draws more samples, so a cell depends on samples x seeds; with unlimited samples the "
              f"data noise alone leaves {100 * floor:.1f} points on these {n} tasks."]  # fmt: skip
    if diff is not None:
        needed = samples_needed(noise, n, diff, level)
        if needed is None:
            lines.append(
                f"A difference of {100 * diff:g} points cannot be detected on {n} tasks however many samples are "
                f"drawn; it needs at least {tasks_needed(noise, diff, level)} tasks like these."
            )
        else:
            lines.append(
                f"A difference of {100 * diff:g} points needs {needed} sample(s) per task in all (samples x seeds; "
                f"MDE {100 * mde(noise, n, needed, level):.1f})."
            )
    return lines


def main(argv: list[str]) -> int:
    """CLI entry: prints the planner's table; see the module docstring."""
    from runner.compose import compose_config
    from runner.validation import typed_config

    options, overrides = parse_args(argv, OPTIONS, "runner.plan", __doc__)
    cfg = typed_config(compose_config(overrides))
    level = options.get("level", cfg.scoring.ci_level)
    if not 0 < level < 1:
        raise UsageError(f"runner.plan: level={level} must be between 0 and 1, e.g. 0.95")
    named = any(o.split("=")[0].lstrip("+").startswith("task_set") for o in overrides)
    if "from" in options:
        noise, n = measured_noise(options["from"], options["correlation"])
        n = _task_count(cfg) if named else n
    else:
        noise, n = assumed_noise(options["pass_rate"], options["correlation"], options["data_share"]), _task_count(cfg)
    where = cfg.task_set.name if named or "from" not in options else f"the tasks of {options['from']}"
    print(f"# Plan for {where}" + (f" (noise measured in {options['from']})" if "from" in options else "") + "\n")
    print("\n".join(plan_lines(noise, n, options["samples"], options["seeds"], level, options.get("diff"))))
    return 0


def _task_count(cfg) -> int:
    from runner.tasks import load_task_set

    n = len(load_task_set(cfg.task_set, cfg.cache_dir))
    if n < 2:
        raise UsageError(f"runner.plan: task_set={cfg.task_set.name} has {n} task(s); a comparison needs two or more")
    return n


if __name__ == "__main__":
    from runner.cli import run

    run(main)
