"""Stability of each task under the model's randomness: across every seed and sample of a model, a task whose
scored answers all passed is `stable_pass`, all failed `stable_fail`, and a task with both is `unstable`.

An unstable task is where prediction noise lives (runner.results.noise): its pass rate is neither 0 nor 1, so
another seed or sample can flip it. With one sample per task nothing can be seen to be unstable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runner.records import AttemptRecord
from runner.results.job_folder import natural_key
from runner.results.scoring import group_samples, task_counts

STABLE_PASS, STABLE_FAIL, UNSTABLE = "stable_pass", "stable_fail", "unstable"
CLASSES = (STABLE_PASS, STABLE_FAIL, UNSTABLE)


def pooled_counts(runs: Iterable[Sequence[AttemptRecord]], stage: str = "repair") -> dict[str, tuple[int, int]]:
    """Per task: (scored samples, passing samples) at `stage` over every run given (e.g. a model's seeds)."""
    total: dict[str, list[int]] = {}
    for records in runs:
        for task, (n, c) in task_counts(group_samples(records), stage).items():
            t = total.setdefault(task, [0, 0])
            t[0] += n
            t[1] += c
    return {task: (n, c) for task, (n, c) in total.items() if n}


def classify(n: int, c: int) -> str:
    """`stable_pass`, `stable_fail` or `unstable` for c passing of n scored samples."""
    return STABLE_PASS if c == n else STABLE_FAIL if c == 0 else UNSTABLE


def stability(counts: dict[str, tuple[int, int]]) -> dict:
    """From `pooled_counts`: the count of each class, `samples_max` (the most samples a task has), and `unstable`,
    {task: [passing, scored]} in natural task order."""
    classes = {task: classify(n, c) for task, (n, c) in counts.items()}
    return {
        **{name: sum(v == name for v in classes.values()) for name in CLASSES},
        "samples_max": max((n for n, _ in counts.values()), default=0),
        "unstable_tasks": {
            t: [counts[t][1], counts[t][0]] for t in sorted(counts, key=natural_key) if classes[t] == UNSTABLE
        },
    }


def stability_line(s: dict, shown: int = 20) -> str:
    """`12 stable-pass, 10 stable-fail, 8 unstable: HumanEval/3 (2/6), ...` from `stability`."""
    head = f"{s[STABLE_PASS]} stable-pass, {s[STABLE_FAIL]} stable-fail, {s[UNSTABLE]} unstable"
    if s["samples_max"] < 2:
        return head + " (one sample per task: nothing can be seen to be unstable)"
    items = [f"{t} ({c}/{n})" for t, (c, n) in s["unstable_tasks"].items()]
    more = f", and {len(items) - shown} more" if len(items) > shown else ""
    return head + (": " + ", ".join(items[:shown]) + more if items else "")
