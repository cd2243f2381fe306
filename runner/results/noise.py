"""A score's uncertainty split into data noise and prediction noise (Wang 2025, "Measuring all the noises of LLM
evals", arXiv 2512.21326; the estimators of crux-eval/eval-arena's `estimators.py`).

With several samples per task, the pass rate's variance has two parts: which tasks happened to be in the set
(data noise, `var(E(A))`: the spread of the tasks' true pass rates) and which answers the model happened to sample
(prediction noise, `E(var(A))`: each task's Bernoulli variance). More samples shrink only the second; more tasks
shrink both. For a paired comparison of A and B on the same tasks the same split holds for A - B.

The estimators are eval-arena's unbiased-in-K ones computed from per-task pass rates, `Unpaired.
from_bernoulli_prob_unbiasedK(p, k).clipped()` and `Paired.from_bernoulli_prob_unbiasedK(pA, pB, kA, kB).clipped()`:
the per-task rate over k samples adds p(1-p)/k of sampling variance to the spread of the rates, which the `bias`
term takes back out of the data part and gives to the prediction part. Here k may differ from task to task (a
task with unscored samples); with one k for every task the figures are eval-arena's exactly (tests/test_noise.py).
With one sample per task the split is undefined (None), as in eval-arena (NaN).

Standard errors are the variances over N tasks: `se_single` = sqrt(total/N), the SE of a one-sample-per-task
score (or comparison), `se_data` = sqrt(var_E/N), `se_prediction` = sqrt(E_var/N) (both per one sample), and
`se` at the samples actually drawn: sqrt(var(rates)/N), i.e. data noise plus prediction noise over k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Variances:
    """Per-sample variance components: `total` = var(A) or var(A-B), `data` = var(E(.)), `prediction` = E(var(.)).

    `data` and `prediction` are None when some task has a single sample (they cannot be told apart then); each
    is clipped at 0 as eval-arena's `clipped()` does (an estimate below 0 is sampling error, not a variance).
    """

    total: float
    data: float | None
    prediction: float | None


def _bias(rates: np.ndarray, k: np.ndarray) -> float | None:
    """mean(p(1-p)/(k-1)): what k samples per task add to the spread of the rates (eval-arena's `bias`)."""
    if np.any(k <= 1):
        return None
    return float(np.mean(rates * (1 - rates) / (k - 1)))


def _clip(x: float | None) -> float | None:
    return None if x is None else max(0.0, x)


def single_variances(rates, k) -> Variances:
    """One run: components of the per-sample variance of its score from per-task pass `rates` over `k` samples
    (a number or one per task); eval-arena's `Unpaired.from_bernoulli_prob_unbiasedK(p, k).clipped()`."""
    p = np.asarray(rates, dtype=float)
    ks = np.broadcast_to(np.asarray(k, dtype=float), p.shape)
    mean = float(p.mean())
    bias = _bias(p, ks)
    data = None if bias is None else float(np.var(p)) - bias
    prediction = None if bias is None else float(np.mean(p * (1 - p))) + bias
    return Variances(_clip(mean * (1 - mean)), _clip(data), _clip(prediction))


def paired_variances(rates_a, rates_b, k_a, k_b) -> Variances:
    """A - B on the same tasks: eval-arena's `Paired.from_bernoulli_prob_unbiasedK(pA, pB, kA, kB).clipped()`."""
    pa, pb = np.asarray(rates_a, dtype=float), np.asarray(rates_b, dtype=float)
    if pa.shape != pb.shape:
        raise ValueError(f"paired_variances: {pa.size} rates for A but {pb.size} for B; pair them by task first")
    ka = np.broadcast_to(np.asarray(k_a, dtype=float), pa.shape)
    kb = np.broadcast_to(np.asarray(k_b, dtype=float), pb.shape)
    ma, mb = float(pa.mean()), float(pb.mean())
    cov = float(np.mean((pa - ma) * (pb - mb)))
    bias_a, bias_b = _bias(pa, ka), _bias(pb, kb)
    bias = None if bias_a is None or bias_b is None else bias_a + bias_b
    data = None if bias is None else float(np.var(pa - pb)) - bias
    prediction = None if bias is None else float(np.mean(pa * (1 - pa)) + np.mean(pb * (1 - pb))) + bias
    return Variances(_clip(ma * (1 - ma) + mb * (1 - mb) - 2 * cov), _clip(data), _clip(prediction))


def _se(variance: float | None, n: int) -> float | None:
    return None if variance is None else math.sqrt(variance / n)


def standard_errors(v: Variances, n: int) -> dict[str, float | None]:
    """`se_single`, `se_data`, `se_prediction` over `n` tasks from the per-sample components `v`."""
    return {"se_single": _se(v.total, n), "se_data": _se(v.data, n), "se_prediction": _se(v.prediction, n)}


def dominant(se_data: float | None, se_prediction: float | None, k: float) -> str | None:
    """Which noise is larger at `k` samples per task: "data" or "prediction" (None when not split)."""
    if se_data is None or se_prediction is None:
        return None
    return "prediction" if se_prediction / math.sqrt(k) > se_data else "data"


def score_noise(rates, k) -> dict[str, float | None]:
    """One run's score: `se` at its samples per task (sqrt(var(rates)/N)) and the three components."""
    p = np.asarray(rates, dtype=float)
    if p.size == 0:
        raise ValueError("score_noise needs at least one task's pass rate")
    out = standard_errors(single_variances(p, k), p.size)
    out["se"] = math.sqrt(float(np.var(p)) / p.size)
    return out
