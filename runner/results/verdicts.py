"""A comparison's verdict: a paired test over tasks, its confidence interval and the smallest difference it could
have detected.

The unit is the task: each task's difference in pass rate d_i = rate_A - rate_B (over however many samples each
run drew for it) is one observation, and tasks are independent draws from the benchmark. A paired t-test on the
d_i is therefore valid with any number of samples per task, which McNemar on pooled samples is not (it counts
samples of one task as independent). `se_diff` = sd(d, ddof=1)/sqrt(N) holds both the data noise and the
prediction noise at the samples drawn (runner.results.noise). The minimum detectable difference at power 1-beta is
(t_{1-alpha/2} + t_{1-beta}) * se_diff on N-1 degrees of freedom; tests/test_verdicts.py checks by simulation
that same-model pairs come out significant at the rate the level says and a planted MDE is detected at 80%.
"""

from __future__ import annotations

import functools
import math

import numpy as np

A_BETTER, B_BETTER, NO_DIFFERENCE = "a_better", "b_better", "no_detectable_difference"
VERDICTS = (A_BETTER, B_BETTER, NO_DIFFERENCE)
POWER = 0.8


@functools.cache
def _t_quantile(q: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(q, df))


def mde_factor(level: float, n: int, power: float = POWER) -> float:
    """(t_{1-alpha/2} + t_{power}) on n-1 degrees of freedom: the MDE in standard errors."""
    df = max(1, n - 1)
    return _t_quantile(1 - (1 - level) / 2, df) + _t_quantile(power, df)


def _sign_test_p(d: np.ndarray) -> float:
    """Two-sided exact sign test over the tasks that differ (when every d_i is the same, the t-test is undefined)."""
    from scipy import stats

    up, down = int(np.sum(d > 0)), int(np.sum(d < 0))
    return 1.0 if up + down == 0 else float(stats.binomtest(up, up + down, 0.5).pvalue)


def verdict(diffs, level: float = 0.95, power: float = POWER) -> dict:
    """Paired verdict on per-task differences `diffs` (A - B): `diff`, `se_diff`, `diff_ci_low` / `diff_ci_high`
    (the t-interval at `level`), `p` (two-sided paired t-test), `mde` (at `power`) and `verdict` (VERDICTS).

    With fewer than two tasks nothing can be tested: p and mde are None and the verdict no_detectable_difference.
    """
    from scipy import special

    if not 0.0 < level < 1.0:
        raise ValueError(f"verdict: level must be in (0, 1), got {level}")
    d = np.asarray(diffs, dtype=float)
    n = d.size
    diff = float(d.mean()) if n else 0.0
    if n < 2:
        return {
            "diff": diff,
            "se_diff": None,
            "diff_ci_low": None,
            "diff_ci_high": None,
            "p": None,
            "mde": None,
            "verdict": NO_DIFFERENCE,
        }
    se = float(np.std(d, ddof=1)) / math.sqrt(n)
    if se > 0:
        p = float(2 * special.stdtr(n - 1, -abs(diff) / se))  # the t distribution's two tails
    else:
        p = _sign_test_p(d)
    half = _t_quantile(1 - (1 - level) / 2, n - 1) * se
    significant = p < 1 - level
    word = NO_DIFFERENCE if not significant else (A_BETTER if diff > 0 else B_BETTER)
    return {
        "diff": diff,
        "se_diff": se,
        "diff_ci_low": diff - half,
        "diff_ci_high": diff + half,
        "p": p,
        "mde": mde_factor(level, n, power) * se,
        "verdict": word,
    }
