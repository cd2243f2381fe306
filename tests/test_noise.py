"""runner.results.noise against eval-arena's estimators, transcribed below.

The reference is crux-eval/eval-arena, `estimators.py` (Sida Wang; the code of "Measuring all the noises of LLM
evals", arXiv 2512.21326): `VarComps.clipped`, `Paired.from_bernoulli_prob_unbiasedK` and
`Unpaired.from_bernoulli_prob_unbiasedK`, and the SEs its `_pair_summary` (arena.py) takes from them:
SE(A-B) = sqrt(var(A-B)/N), SE_x = sqrt(var(E(A-B))/N), SE_pred = sqrt(E(var(A-B))/N). Transcribed faithfully
(names, formulas and the clipping rule kept), without the dataclasses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from runner.results.compare import compare_outcomes
from runner.results.noise import paired_variances, score_noise, single_variances, standard_errors


# --- eval-arena, estimators.py (transcribed) ---------------------------------------------------------------------
def _ea_cov(A, B, ddof=0):
    return np.sum((A - np.mean(A)) * (B - np.mean(B))) / (len(A) - ddof)


def _ea_clipped(total_var, var_E, E_var):
    def clip(x):
        return x if np.isnan(x) else max(0, x)

    return clip(total_var), clip(var_E), clip(E_var)


def ea_paired_from_bernoulli_prob_unbiasedK(pA, pB, kA, kB):
    """Paired.from_bernoulli_prob_unbiasedK(pA, pB, kA, kB).clipped() -> (var(A-B), var(E(A-B)), E(var(A-B)))."""
    from numpy import mean, var

    assert pA.size == pB.size
    pA = pA.flatten()
    pB = pB.flatten()
    if kA == 1 or kB == 1:
        bias = np.nan
    else:
        bias = 1 / (kA - 1) * mean(pA * (1 - pA)) + 1 / (kB - 1) * mean(pB * (1 - pB))
    return _ea_clipped(
        mean(pA) * (1 - mean(pA)) + mean(pB) * (1 - mean(pB)) - 2 * _ea_cov(pA, pB),
        var(pA - pB) - bias,
        mean(pA * (1 - pA)) + mean(pB * (1 - pB)) + bias,
    )


def ea_unpaired_from_bernoulli_prob_unbiasedK(pA, kA):
    """Unpaired.from_bernoulli_prob_unbiasedK(pA, kA).clipped() -> (var(A), var(E(A)), E(var(A)))."""
    from numpy import mean, var

    pA = pA.flatten()
    bias = np.nan if kA == 1 else 1 / (kA - 1) * mean(pA * (1 - pA))
    return _ea_clipped(mean(pA) * (1 - mean(pA)), var(pA) - bias, mean(pA * (1 - pA)) + bias)


def ea_ses(components, n):
    """arena.py's `_pair_summary`: SE(A-B), SE_x(A-B), SE_pred(A-B) from the components over N questions."""
    total, data, pred = components
    return tuple(math.sqrt(1 / n * v) for v in (total, data, pred))


# ------------------------------------------------------------------------------------------------------------------


def _rates(rng, n, k, shape=(0.6, 0.6)):
    p = rng.beta(*shape, size=n)
    return rng.binomial(k, p) / k


@pytest.mark.parametrize("k_a,k_b,n", [(5, 5, 164), (3, 10, 30), (2, 2, 10), (20, 4, 378)])
def test_paired_ses_equal_eval_arenas(k_a, k_b, n):
    rng = np.random.default_rng(k_a * 100 + n)
    pa, pb = _rates(rng, n, k_a), _rates(rng, n, k_b)
    ours = standard_errors(paired_variances(pa, pb, k_a, k_b), n)
    theirs = ea_ses(ea_paired_from_bernoulli_prob_unbiasedK(pa, pb, k_a, k_b), n)
    assert (ours["se_single"], ours["se_data"], ours["se_prediction"]) == pytest.approx(theirs, abs=1e-6)


@pytest.mark.parametrize("k,n", [(5, 164), (2, 10), (10, 378)])
def test_single_ses_equal_eval_arenas(k, n):
    rng = np.random.default_rng(k + n)
    p = _rates(rng, n, k)
    ours = score_noise(p, k)
    theirs = ea_ses(ea_unpaired_from_bernoulli_prob_unbiasedK(p, k), n)
    assert (ours["se_single"], ours["se_data"], ours["se_prediction"]) == pytest.approx(theirs, abs=1e-6)


def test_clipping_matches_and_one_sample_leaves_the_split_undefined():
    same = np.array([0.5, 0.5, 0.5, 0.5])  # no spread at all: the data part estimates below 0 and is clipped
    v = paired_variances(same, same, 2, 2)
    assert v.data == 0.0 and ea_paired_from_bernoulli_prob_unbiasedK(same, same, 2, 2)[1] == 0
    one = np.array([1.0, 0.0, 1.0])
    assert single_variances(one, 1).data is None and np.isnan(ea_unpaired_from_bernoulli_prob_unbiasedK(one, 1)[1])
    assert paired_variances(one, one[::-1], 1, 1).prediction is None


def test_a_comparison_carries_eval_arenas_ses_and_the_se_at_its_samples():
    """compare_outcomes on samples: the SEs of eval-arena on its per-task rates, se_diff = sd(d)/sqrt(N)."""
    rng = np.random.default_rng(7)
    n, k = 40, 4
    p = rng.beta(0.5, 0.5, size=n)
    a_draws, b_draws = rng.random((n, k)) < p[:, None], rng.random((n, k)) < (p[:, None] ** 3)
    a = {(f"t{i}", s): bool(a_draws[i, s]) for i in range(n) for s in range(k)}
    b = {(f"t{i}", s): bool(b_draws[i, s]) for i in range(n) for s in range(k)}
    r = compare_outcomes(a, b, "first")
    pa, pb = a_draws.mean(axis=1), b_draws.mean(axis=1)
    theirs = ea_ses(ea_paired_from_bernoulli_prob_unbiasedK(pa, pb, k, k), n)
    assert (r["se_single"], r["se_data"], r["se_prediction"]) == pytest.approx(theirs, abs=1e-6)
    assert r["se_diff"] == pytest.approx(np.std(pa - pb, ddof=1) / math.sqrt(n), abs=1e-12)
    assert (r["k_a"], r["k_b"], r["tasks"]) == (k, k, n)
    assert r["se_data"] > 0  # not clipped: then the parts add up exactly
    # at k samples the data part plus the prediction part over k is the variance of the rates' difference
    assert r["se_data"] ** 2 + r["se_prediction"] ** 2 / k == pytest.approx(np.var(pa - pb) / n, rel=1e-9)
