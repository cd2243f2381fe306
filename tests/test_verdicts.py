"""runner.results.verdicts calibrated by simulation: synthetic runs with known per-task pass probabilities.

- two runs of one model (the same probabilities) come out significant in 5% ± 2% of 1,000 simulations at 0.95;
- a difference planted at the MDE the verdict reports for runs of that size is detected in 80% ± 5% of them.
Each simulation draws a fresh task set from the population (tasks are a sample too) and k samples per task.
"""

from __future__ import annotations

import numpy as np
import pytest

from runner.results.verdicts import A_BETTER, NO_DIFFERENCE, verdict

SIMULATIONS = 1000


def _population(rng, kind: str, size):
    if kind == "bimodal":  # like code benchmarks: most tasks nearly always or nearly never solved
        return rng.beta(0.3, 0.3, size=size)
    return rng.uniform(0.15, 0.85, size=size)


def _run(rng, p, k):
    """Per-task pass rates of one run: k samples of each task, shape (simulations, tasks)."""
    return rng.binomial(k, p) / k


@pytest.mark.parametrize("kind,n,k", [("bimodal", 164, 5), ("uniform", 164, 1), ("uniform", 100, 10)])
def test_same_model_pairs_are_significant_at_the_level(kind, n, k):
    rng = np.random.default_rng(2026 + n + k)
    p = _population(rng, kind, (SIMULATIONS, n))
    a, b = _run(rng, p, k), _run(rng, p, k)
    verdicts = [verdict(a[i] - b[i], 0.95)["verdict"] for i in range(SIMULATIONS)]
    false_alarms = np.mean([v != NO_DIFFERENCE for v in verdicts])
    print(f"{kind} N={n} k={k}: same-model pairs significant in {false_alarms:.1%} of {SIMULATIONS}")
    assert 0.03 <= false_alarms <= 0.07


@pytest.mark.parametrize("n,k", [(164, 5), (164, 1), (60, 10)])
def test_a_difference_of_the_reported_mde_is_detected_four_times_in_five(n, k):
    rng = np.random.default_rng(47 + n + k)
    p = _population(rng, "uniform", (SIMULATIONS, n))
    null = [verdict(d, 0.95)["mde"] for d in _run(rng, p, k) - _run(rng, p, k)]
    mde = float(np.mean(null))  # what runs of this size report
    a, b = _run(rng, p, k), _run(rng, p - mde, k)  # B: every task's probability lower by the MDE
    detected = np.mean([verdict(a[i] - b[i], 0.95)["verdict"] == A_BETTER for i in range(SIMULATIONS)])
    print(f"N={n} k={k}: reported MDE {100 * mde:.1f} points, detected in {detected:.1%} of {SIMULATIONS}")
    assert 0.75 <= detected <= 0.85


def test_verdict_words_and_degenerate_cases():
    assert verdict([0.5] * 10)["verdict"] == A_BETTER  # every task better: the sign test decides (se is 0)
    assert verdict([-0.2, -0.4, -0.1, -0.3, -0.2, -0.5, -0.3, -0.2])["verdict"] == "b_better"
    assert verdict([0.0] * 10)["p"] == 1.0 and verdict([0.0] * 10)["verdict"] == NO_DIFFERENCE
    one = verdict([0.3])
    assert one["verdict"] == NO_DIFFERENCE and one["p"] is None and one["mde"] is None
    with pytest.raises(ValueError, match="level"):
        verdict([0.1, 0.2], level=95)
