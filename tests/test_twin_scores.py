"""The twins probe's score: paired drop per family with its CI and p, suspects both ways, the report's lines."""

from __future__ import annotations

import pytest

from runner.records import AttemptRecord
from runner.results.twin_scores import twin_metrics, twin_scores, twin_table
from runner.results.twin_summary import report_lines
from runner.results.verdicts import verdict


def rec(task, passed, sample=0) -> AttemptRecord:
    return AttemptRecord(
        task_id=task, sample=sample, attempt=0, seed=1, model="m", messages=[], options={},
        response="", code=None, outcome="passed" if passed else "failed", final=True,
    )  # fmt: skip


def test_drop_ci_p_and_suspects_per_family():
    originals = [rec(f"t{i}", i < 8) for i in range(10)]  # 8/10
    renamed = [rec(f"t{i}~rename", i < 3 or i == 9) for i in range(10)]  # t3..t7 fail, t9 passes
    formatted = [rec(f"t{i}~format", i < 8) for i in range(10)]  # no change
    twins = {f"t{i}~{f}": (f"t{i}", f) for i in range(10) for f in ("rename", "format")}
    scores = twin_scores(originals + renamed + formatted, twins)
    rename, fmt = scores["rename"], scores["format"]
    assert list(scores) == ["rename", "format"]
    assert rename["tasks"] == 10 and rename["drop"] == pytest.approx(0.4)
    assert rename["passed_original"] == pytest.approx(0.8) and rename["passed_twin"] == pytest.approx(0.4)
    assert rename["ci_low"] <= 0.4 <= rename["ci_high"]
    assert rename["p"] == pytest.approx(verdict([0] * 3 + [1] * 5 + [0, -1])["p"])  # paired over tasks
    assert rename["suspects"] == ["t3", "t4", "t5", "t6", "t7"] and rename["reverse"] == ["t9"]
    assert fmt["drop"] == 0 and fmt["suspects"] == [] and fmt["p"] == 1.0
    metrics = twin_metrics(scores)
    assert metrics["twins_rename_drop"] == pytest.approx(0.4) and metrics["twins_rename_suspects"] == 5
    table = "\n".join(twin_table(scores, 0.95))
    assert "| rename | 10 | 80.0% | 40.0% | +40.0 [" in table
    line = report_lines([("A", scores), ("B", {"rename": {**rename, "drop": 0.02, "ci_low": -0.01, "ci_high": 0.05}})])
    assert (
        line[0].startswith("- **rename** twins: A drops 40.0 points [") and "B drops 2.0 points [-1.0, 5.0]" in line[0]
    )


def test_a_task_keeps_its_samples_and_a_missing_twin_is_left_out():
    originals = [rec("t0", True, s) for s in range(4)] + [rec("t1", s < 2, s) for s in range(4)]
    twins_records = [rec("t0~rename", s == 0, s) for s in range(4)]  # t1 has no twin (not made or gold-excluded)
    scores = twin_scores(originals + twins_records, {"t0~rename": ("t0", "rename")})
    s = scores["rename"]
    assert (s["tasks"], s["pairs"]) == (1, 4) and s["drop"] == pytest.approx(0.75)
    assert s["suspects"] == [] and s["reverse"] == []  # t0's twin passed one sample of four
    assert s["ci_low"] is None and s["p"] is None and twin_table(scores, 0.95)[-1].startswith("| rename | 1 | n/a")
