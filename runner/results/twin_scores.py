"""The twins probe's score: per family, the originals against their twins, paired over tasks.

Per family: the tasks compared (an original and its twin both scored), the pass rate of each, the paired drop
(original − twin) with its CI over tasks, each task keeping its samples, and the p of the paired t-test over tasks
(runner.results.compare.paired_compare, the machinery every comparison of runs uses: valid with several samples
per task, and the CI agrees with the test); the suspects, tasks the model passes in the original
(half its samples or more) and fails in every sample of the twin, and the reverse list. The first attempt is
compared: repair feeds the visible tests back, which says less about what the model recalled.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence

from runner.config import TwinFamily
from runner.records import AttemptRecord
from runner.results.compare import paired_compare
from runner.results.scoring import group_samples, is_scored

STAGE = "first"


def _rates(records: Sequence[AttemptRecord]) -> dict[str, float]:
    passed: dict[str, list[bool]] = defaultdict(list)
    for s in group_samples(records):
        record = s.record(STAGE)
        if is_scored(record):
            passed[s.task_id].append(record.passed)
    return {task: sum(p) / len(p) for task, p in passed.items()}


def twin_scores(
    records: Sequence[AttemptRecord],
    twins: Mapping[str, tuple[str, str]],
    level: float = 0.95,
) -> dict[str, dict]:
    """Per family, the probe's score. `twins` maps a twin's id to (its original's id, its family)."""
    originals = [r for r in records if r.task_id not in twins]
    scores = {}
    for family in sorted({f for _, f in twins.values()}, key=_family_order):
        mine = {tid: orig for tid, (orig, f) in twins.items() if f == family}
        relabelled = [dataclasses.replace(r, task_id=mine[r.task_id]) for r in records if r.task_id in mine]
        paired = paired_compare(originals, relabelled, STAGE, level)
        rate_a, rate_b = _rates(originals), _rates(relabelled)
        shared = sorted(set(rate_a) & set(rate_b))
        score = {
            "tasks": paired["tasks"],
            "pairs": paired["pairs"],
            "passed_original": paired.get("pass_rate_a"),
            "passed_twin": paired.get("pass_rate_b"),
            "drop": paired.get("diff"),
            "ci_low": paired.get("diff_ci_low"),
            "ci_high": paired.get("diff_ci_high"),
            "p": paired.get("p"),
            "mde": paired.get("mde"),
            "verdict": paired["verdict"],
            "suspects": [t for t in shared if rate_a[t] >= 0.5 and rate_b[t] == 0],
            "reverse": [t for t in shared if rate_a[t] == 0 and rate_b[t] >= 0.5],
        }
        scores[family] = score
    return scores


def _family_order(family: str) -> int:
    names = [f.value for f in TwinFamily]
    return names.index(family) if family in names else len(names)


def twin_metrics(scores: Mapping[str, dict]) -> dict[str, float]:
    """The scores as flat MLflow metrics: `twins_<family>_<drop|ci_low|ci_high|p|tasks|passed_original|...>`."""
    out = {}
    for family, score in scores.items():
        for key in ("tasks", "passed_original", "passed_twin", "drop", "ci_low", "ci_high", "p"):
            if score.get(key) is not None:
                out[f"twins_{family}_{key}"] = float(score[key])
        out[f"twins_{family}_suspects"] = float(len(score["suspects"]))
    return out


def twin_table(scores: Mapping[str, dict], level: float) -> list[str]:
    """Markdown lines: one row per family (originals vs twins, the drop with its CI, p, suspects)."""
    if not scores:
        return []
    lines = [
        "",
        f"Twins (first attempt; drop = original − twin in points, paired over tasks, {level:.0%} CI; "
        "p of the paired t-test over tasks). The headline pass@k above is the originals' alone.",
        "",
        "| family | tasks | original | twin | drop [CI] | p | suspects (pass original, fail twin) | reverse |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for family, s in scores.items():
        if s["ci_low"] is None:  # fewer than two tasks compared: no CI, no test
            lines.append(f"| {family} | {s['tasks']} | n/a | n/a | n/a | n/a | | |")
            continue
        drop = f"{100 * s['drop']:+.1f} [{100 * s['ci_low']:+.1f}, {100 * s['ci_high']:+.1f}]"
        suspects = ", ".join(s["suspects"][:8]) + (f" (+{len(s['suspects']) - 8})" if len(s["suspects"]) > 8 else "")
        reverse = ", ".join(s["reverse"][:5]) + (f" (+{len(s['reverse']) - 5})" if len(s["reverse"]) > 5 else "")
        rates = f"{100 * s['passed_original']:.1f}% | {100 * s['passed_twin']:.1f}%"
        lists = f"{len(s['suspects'])}: {suspects} | {len(s['reverse'])}: {reverse}"
        lines.append(f"| {family} | {s['tasks']} | {rates} | {drop} | {s['p']:.3g} | {lists} |")
    return lines
