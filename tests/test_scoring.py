"""Tests for runner.results.scoring: pass@k against brute force, bootstrap coverage, summarize on handcrafted runs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlflow.utils.validation import validate_param_and_metric_name

from runner.records import AttemptRecord
from runner.results.scoring import bootstrap_ci, group_samples, pass_at_k, scoring_notes, summarize, task_table


def rec(task, outcome, attempt=0, final=True, sample=0, suites=None, **kw) -> AttemptRecord:
    return AttemptRecord(
        task_id=task, sample=sample, attempt=attempt, seed=1, model="m", messages=[], options={},
        response="", code=None, outcome=outcome, final=final, suites=suites or {}, **kw,
    )  # fmt: skip


def brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Fraction of all k-subsets of n samples (the first c correct) containing a correct one."""
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@settings(derandomize=True, database=None, max_examples=200)
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_matches_brute_force(nck):
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(n, c, k), abs=1e-12)


@settings(derandomize=True, database=None, max_examples=100)
@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_1_is_fraction_correct(nc):
    n, c = nc
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_pass_at_k_stable_for_large_n():
    # C(1000, 500) overflows a float; the product form must not.
    assert 0.0 < pass_at_k(1000, 3, 500) <= 1.0
    assert pass_at_k(1000, 0, 500) == 0.0


@pytest.mark.parametrize("n,c,k", [(3, 1, 4), (1, 0, 2), (0, 0, 1)])
def test_pass_at_k_k_above_n_raises(n, c, k):
    with pytest.raises(ValueError, match="exceeds"):
        pass_at_k(n, c, k)


def test_pass_at_k_c_above_n_raises():
    with pytest.raises(ValueError, match="cannot exceed"):
        pass_at_k(3, 4, 1)


def test_bootstrap_ci_coverage_on_simulated_data():
    """90% CI over 40 tasks with known p should cover p in roughly 85-95% of 300 datasets."""
    rng = np.random.default_rng(12345)
    p = 0.7
    covered = 0
    for i in range(300):
        values = rng.random(40) < p
        low, high = bootstrap_ci(values.astype(float), level=0.90, resamples=1000, seed=i)
        covered += low <= p <= high
    assert 0.85 * 300 <= covered <= 0.95 * 300, covered


def test_bootstrap_ci_is_seeded_and_brackets_mean():
    values = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
    assert bootstrap_ci(values, 0.95, 500, seed=3) == bootstrap_ci(values, 0.95, 500, seed=3)
    low, high = bootstrap_ci(values, 0.95, 500, seed=3)
    assert low < np.mean(values) < high
    assert bootstrap_ci([0.5], 0.95, 100, 0) == (0.5, 0.5)
    with pytest.raises(ValueError):
        bootstrap_ci([], 0.95, 100, 0)


ALL = {"visible": True, "hidden": True, "properties": True}


def handcrafted_run() -> list[AttemptRecord]:
    return [
        # t1: passes at once
        rec("t1", "passed", suites=ALL, generation_s=2.0, prompt_tokens=10, completion_tokens=30),
        # t2: visible passes, hidden fails; the repair fixes it
        rec("t2", "failed", final=False, suites={"visible": True, "hidden": False}, completion_tokens=10),
        rec("t2", "passed", attempt=1, suites=ALL, completion_tokens=20),
        # t3: gate rejects, the repair fails a visible test
        rec("t3", "policy_rejected", final=False, rule="import"),
        rec("t3", "failed", attempt=1, suites={"visible": False}),
        # t4: the model server failed: unscored, never a model failure
        rec("t4", "backend_error", generation_s=3.0),
    ]


def test_summarize_first_vs_repair_and_suites():
    m = summarize(handcrafted_run(), ks=(1,), resamples=200)
    assert m["tasks"] == 4 and m["samples"] == 4
    assert m["unscored_samples"] == 1 and m["unscored_samples_first"] == 1
    assert m["pass_at_1_first"] == pytest.approx(1 / 3)
    assert m["pass_at_1_first_all"] == m["pass_at_1_first"]
    assert m["pass_at_1_first_tasks"] == 3
    assert m["pass_at_1_repair"] == pytest.approx(2 / 3)
    assert m["pass_at_1_first_visible"] == pytest.approx(2 / 3)  # t1, t2 pass the visible suite
    assert m["pass_at_1_first_visible_hidden"] == pytest.approx(1 / 3)
    assert m["pass_at_1_repair_visible"] == pytest.approx(2 / 3)
    assert m["pass_at_1_first_ci_low"] <= m["pass_at_1_first"] <= m["pass_at_1_first_ci_high"]
    assert m["gate_rejections_first"] == 1 and m["test_failures_first"] == 1
    assert m["gate_rejections_repair"] == 0 and m["test_failures_repair"] == 1
    assert m["outcome_first_backend_error_count"] == 1
    assert m["outcome_first_passed_rate"] == pytest.approx(1 / 4)
    assert m["outcome_repair_passed_count"] == 2
    assert m["repair_attempted"] == 2 and m["repair_fixed"] == 1
    assert m["repair_success_rate"] == pytest.approx(0.5)
    assert m["generation_s_mean"] == pytest.approx(5.0 / 6)
    assert m["completion_tokens_total"] == 60
    assert m["attempts"] == 6


def test_summarize_pass_at_k_with_samples_and_skipped_k():
    records = [rec("a", "passed" if s < 2 else "failed", sample=s) for s in range(5)]
    records += [rec("b", "failed", sample=s) for s in range(5)]
    records += [rec("c", "passed", sample=0), rec("c", "harness_error", sample=1)]
    m = summarize(records, ks=(1, 5), resamples=200)
    assert m["pass_at_1_first"] == pytest.approx((2 / 5 + 0 + 1) / 3)
    assert m["pass_at_5_first"] == pytest.approx((1.0 + 0.0) / 2)  # task c has 1 scored sample
    assert m["pass_at_5_first_tasks"] == 2
    notes = scoring_notes(records, ks=(1, 5, 6))
    assert any("pass@5 averages 2 tasks" in n and "c" in n for n in notes)
    assert any("pass@6 skipped" in n for n in notes)
    assert any("1 harness_error" in n for n in notes)
    assert "pass_at_6_first" not in summarize(records, ks=(6,), resamples=10)


def test_metric_names_are_valid_mlflow_keys():
    for name in summarize(handcrafted_run(), ks=(1, 2), resamples=10):
        assert validate_param_and_metric_name(name), name


def test_group_samples_last_duplicate_wins_and_incomplete():
    records = [rec("t", "error", final=False), rec("t", "failed", final=False), rec("u", "passed")]
    samples = group_samples(records)
    assert samples[0].first.outcome == "failed" and samples[0].final is None
    m = summarize(records, resamples=10)
    assert m["incomplete_samples"] == 1
    assert m["pass_at_1_repair_tasks"] == 1  # the incomplete sample has no repair-stage record


def test_task_table_rows():
    rows = {r["task_id"]: r for r in task_table(handcrafted_run())}
    assert rows["t2"]["outcome_first"] == "failed" and rows["t2"]["outcome_repair"] == "passed"
    assert rows["t2"]["repair_attempts"] == 1
    assert rows["t4"]["scored_first"] == 0 and rows["t4"]["pass_rate_first"] is None
    assert rows["t2"]["attempts"] == 2 and rows["t2"]["compliant_repair"] == 1 and rows["t2"]["audit_score"] is None


def test_task_table_breaks_outcomes_down_over_samples_and_carries_the_audit_score():
    records = [rec("a", "passed", sample=0), rec("a", "failed", sample=1), rec("a", "failed", sample=2)]
    records += [rec("a", "passed", sample=3, violations=[{"rule": "import", "line": 1, "message": "os"}])]
    (row,) = task_table(records, audit={"a": 0.75, "other": 0.1})
    assert row["outcomes_first"] == "passed×2, failed×2" and row["outcome_first"] == "failed"
    assert row["passed_first"] == 2 and row["compliant_first"] == 1 and row["samples"] == 4
    assert row["audit_score"] == 0.75
