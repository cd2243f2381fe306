"""Tests for runner.results.compare: exact McNemar, paired comparison and seed spread."""

from __future__ import annotations

import pytest

from runner.records import AttemptRecord
from runner.results.compare import mcnemar_p, paired_compare, seed_spread


def rec(task, outcome, sample=0, seed=1) -> AttemptRecord:
    return AttemptRecord(
        task_id=task, sample=sample, attempt=0, seed=seed, model="m", messages=[], options={},
        response="", code=None, outcome=outcome, final=True,
    )  # fmt: skip


def run(passing: set[int], tasks: int = 10, extra=()) -> list[AttemptRecord]:
    return [rec(f"t{i}", "passed" if i in passing else "failed") for i in range(tasks)] + list(extra)


@pytest.mark.parametrize(
    "b,c,p",
    [(1, 9, 0.021484375), (0, 5, 0.0625), (5, 5, 1.0), (0, 0, 1.0), (2, 10, 0.0385742188), (0, 1, 1.0)],
)
def test_mcnemar_known_values(b, c, p):
    assert mcnemar_p(b, c) == pytest.approx(p, abs=1e-9)
    assert mcnemar_p(c, b) == pytest.approx(p, abs=1e-9)


def test_paired_compare_counts_and_ci():
    a = run({0, 1, 2, 3, 4, 5, 6, 7, 8})  # 9/10
    b = run({0, 1, 2, 3, 4, 9})  # 6/10: A-only passes t5..t8 (4), B-only t9 (1)
    r = paired_compare(a, b, stage="first")
    assert (r["tasks"], r["pairs"], r["b"], r["c"]) == (10, 10, 4, 1)
    assert r["diff"] == pytest.approx(0.3)
    assert r["pass_rate_a"] == pytest.approx(0.9) and r["pass_rate_b"] == pytest.approx(0.6)
    assert r["diff_ci_low"] <= 0.3 <= r["diff_ci_high"]
    assert r["mcnemar_p"] == pytest.approx(mcnemar_p(4, 1))
    assert paired_compare(b, a, stage="first")["diff"] == pytest.approx(-0.3)


def test_paired_compare_uses_only_shared_scored_pairs():
    a = run({0, 1}, tasks=3, extra=[rec("only_a", "passed")])
    b = run({0}, tasks=3)
    b[1] = rec("t1", "backend_error")  # unscored in B: the pair is dropped, not counted as B failing
    r = paired_compare(a, b, stage="repair")
    assert (r["tasks"], r["pairs"], r["only_a"], r["b"], r["c"]) == (2, 2, 2, 0, 0)
    assert r["diff"] == pytest.approx(0.0)


def test_seed_spread_separates_seed_and_task_spread():
    runs = {1: run({0, 1, 2, 3, 4}), 2: run({0, 1, 2, 3, 4, 5, 6}), 3: run({0, 1, 2, 3, 4, 5})}
    s = seed_spread(runs, resamples=300)
    assert s["seeds"] == 3
    assert s["first_per_seed"] == {1: 0.5, 2: 0.7, 3: 0.6}
    assert s["first_mean"] == pytest.approx(0.6)
    assert s["first_std"] == pytest.approx(0.1)
    assert (s["first_min"], s["first_max"]) == (0.5, 0.7)
    assert s["first_ci_width_mean"] > s["first_max"] - s["first_min"]  # 10 tasks: wide within-seed CI
    assert seed_spread({1: runs[1]}, resamples=10)["first_std"] is None
