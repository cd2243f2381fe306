"""runner.plan: the MDE grid from assumptions or from a sweep folder, and the samples a difference needs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from runner.plan import Noise, assumed_noise, main, mde, measured_noise, samples_needed, tasks_needed
from runner.report import make_report
from tests.test_report import rec, write_job


def _sweep(tmp_path, samples=3, tasks=30):
    """Two models, seeds 1 and 2, `samples` samples per task, per-task probabilities fixed by a seeded draw."""
    rng = np.random.default_rng(5)
    p = {"alpha": rng.beta(0.5, 0.5, tasks)}
    p["beta"] = rng.beta(0.5, 0.5, tasks)  # an unrelated model: the data noise of the difference is large
    root = tmp_path / "sweep"
    for i, (model, seed) in enumerate((m, s) for m in ("alpha", "beta") for s in (1, 2)):
        records = []
        for t in range(tasks):
            for s in range(samples):
                r = rec(f"t{t}", "passed" if rng.random() < p[model][t] else "failed", model, seed)
                records.append(type(r)(**{**r.__dict__, "sample": s}))
        write_job(root / f"{i}_{model}_s{seed}", model, seed, records)
    return root


def test_the_plan_at_the_measured_samples_is_the_reports_mde(tmp_path):
    root = _sweep(tmp_path)
    noise, n = measured_noise(str(root), correlation=0.5)
    make_report([d for d in sorted(root.iterdir())], tmp_path / "out")
    import json

    report = json.loads((tmp_path / "out" / "report.json").read_text())
    pooled = next(c for c in report["comparisons"] if c["job_a"] == "alpha" and c["stage"] == "repair")
    assert (pooled["k_a"], pooled["tasks"], n) == (6, 30, 30)
    # the report's se_diff uses sd(ddof=1), the plan the variance components (ddof=0): sqrt(N/(N-1)) apart
    assert mde(noise, n, 6, 0.9) * math.sqrt(n / (n - 1)) == pytest.approx(pooled["mde"], rel=1e-6)


def test_more_samples_shrink_only_the_prediction_noise():
    noise = assumed_noise(0.5, 0.5, 0.5)
    assert noise == Noise(0.125, 0.125, 0.125, noise.source)
    grid = [mde(noise, 164, k, 0.95) for k in (1, 2, 5, 20, 10**9)]
    assert grid == sorted(grid, reverse=True)
    assert grid[-1] == pytest.approx(mde(Noise(0.125, 0, 0, ""), 164, 1, 0.95), rel=1e-6)  # the data noise floor


def test_samples_needed_reaches_the_difference_and_says_when_none_can():
    noise = assumed_noise(0.5, 0.9, 0.5)  # closely related models: little data noise in the difference
    k = samples_needed(noise, 164, 0.06, 0.95)
    assert mde(noise, 164, k, 0.95) <= 0.06 < mde(noise, 164, k - 1, 0.95)
    assert samples_needed(noise, 164, 0.01, 0.95) is None
    n = tasks_needed(noise, 0.01, 0.95)
    assert mde(Noise(noise.data, 0, 0, ""), n, 1, 0.95) <= 0.01 < mde(Noise(noise.data, 0, 0, ""), n - 1, 1, 0.95)


def test_the_command_prints_the_table_and_refuses_bad_input(tmp_path, capsys):
    assert main([f"from={_sweep(tmp_path)}", "diff=0.35", "samples=1,3", "seeds=1,2"]) == 0
    out = capsys.readouterr().out
    assert "30 tasks, measured: alpha vs beta" in out and "| samples per task | 1 seed(s) | 2 seed(s) |" in out
    assert "A difference of 35 points needs" in out
    with pytest.raises(Exception, match="pass_rate=2.0 must be between 0 and 1"):
        main(["pass_rate=2"])
