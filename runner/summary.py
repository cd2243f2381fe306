"""The end-of-job summary: one row per task and a Markdown table a person can read."""

from __future__ import annotations

from collections import defaultdict

from runner.config import Config
from runner.records import AttemptRecord


def task_rows(records: list[AttemptRecord], audit: dict[str, float] | None = None) -> list[dict]:
    """Per task: samples, first-attempt and after-repair passes, outcomes, attempts, audit score."""
    by_task: dict[str, list[AttemptRecord]] = defaultdict(list)
    for record in records:
        by_task[record.task_id].append(record)
    rows = []
    for task_id in sorted(by_task):
        recs = by_task[task_id]
        firsts = [r for r in recs if r.attempt == 0]
        finals = [r for r in recs if r.final]
        rows.append(
            {
                "task_id": task_id,
                "samples": len(finals),
                "passed_first": sum(r.passed for r in firsts),
                "passed_repair": sum(r.passed for r in finals),
                "outcome_first": _outcomes(firsts),
                "outcome_final": _outcomes(finals),
                "attempts": len(recs),
                "audit_score": (audit or {}).get(task_id),
            }
        )
    return rows


def _outcomes(records: list[AttemptRecord]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for r in sorted(records, key=lambda r: r.sample):
        counts[r.outcome] += 1
    if len(records) == 1:
        return records[0].outcome
    return ", ".join(f"{k}×{v}" for k, v in counts.items())


def summary_table(cfg: Config, metrics: dict, rows: list[dict]) -> str:
    """Markdown: per-task outcomes, then the totals first vs after repair with pass@1 and its CI."""
    lines = [
        f"## {cfg.model.name} (seed {cfg.seed}) on {cfg.task_set.name}",
        "",
        "| task | first attempt | after repair | passed first | passed after repair | attempts | audit |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        audit = "" if r["audit_score"] is None else f"{r['audit_score']:.2f}"
        lines.append(
            f"| {r['task_id']} | {r['outcome_first']} | {r['outcome_final']} | {r['passed_first']}/{r['samples']} "
            f"| {r['passed_repair']}/{r['samples']} | {r['attempts']} | {audit} |"
        )
    first = sum(r["passed_first"] for r in rows)
    final = sum(r["passed_repair"] for r in rows)
    samples = sum(r["samples"] for r in rows)
    lines += ["", f"**Passed: {first}/{samples} first attempt, {final}/{samples} after repair.**"]
    for stage in ("first", "repair"):
        key = f"pass_at_1_{stage}"
        if key in metrics:
            low, high = metrics.get(f"{key}_ci_low"), metrics.get(f"{key}_ci_high")
            ci = f" ({cfg.scoring.ci_level:.0%} CI {low:.3f}–{high:.3f})" if low is not None else ""
            lines.append(f"pass@1 {stage}: {metrics[key]:.3f}{ci}")
    return "\n".join(lines)
