"""What one job's result can and cannot say: its noise split (runner.results.noise), the difference another run
of its size must show to be told apart (runner.results.verdicts), its unstable tasks (runner.results.stability),
and whether memorisation was probed. The job summary ends with this section; the noise goes in summary.json.
"""

from __future__ import annotations

import math

import numpy as np

from runner.results.noise import dominant, score_noise
from runner.results.stability import stability, stability_line
from runner.results.verdicts import mde_factor

HEADING = "### What this run can and cannot say"


def _rates(rows: list[dict], stage: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-task pass rates at `stage` and their scored samples, from runner.results.scoring.task_table rows."""
    scored = [r for r in rows if r[f"scored_{stage}"]]
    k = np.array([r[f"scored_{stage}"] for r in scored], dtype=float)
    return np.array([r[f"passed_{stage}"] for r in scored], dtype=float) / k if scored else k, k


def noise_metrics(rows: list[dict]) -> dict[str, float]:
    """`noise_se_<stage>` (the score's SE at its samples per task) and `noise_se_single_`, `noise_se_data_`,
    `noise_se_prediction_<stage>` (eval-arena's components; left out with one sample per task)."""
    out = {}
    for stage in ("first", "repair"):
        rates, k = _rates(rows, stage)
        if rates.size:
            noise = score_noise(rates, k)
            out.update({f"noise_{name}_{stage}": v for name, v in noise.items() if v is not None})
    return out


def _twins(cfg) -> str:
    """Whether the memorisation probe ran: the `twins` switch (runner.twins) and where its drop is reported."""
    family = str(cfg.twins.family)
    if family == "off":
        return "not probed (twins=off; `twins=all` adds perturbed twins of every task and reports the score drop)"
    return f"probed with twins={family}: the drop per family is in the twins table of this summary"


def limits_lines(cfg, metrics: dict, rows: list[dict]) -> list[str]:
    """The section's Markdown lines for one job (the final attempts: after repair, when repair is on)."""
    level = cfg.scoring.ci_level
    rates, k = _rates(rows, "repair")
    lines = ["", HEADING, ""]
    if not rates.size:
        return lines + [
            "- Nothing was scored: this run says nothing about the model.",
            f"- Memorisation: {_twins(cfg)}.",
        ]
    n, k_mean = rates.size, float(k.mean())
    noise = score_noise(rates, k)
    samples = f"{int(k[0])}" if np.all(k == k[0]) else f"{k_mean:.1f} (mean)"
    ci = ""
    if "pass_at_1_repair_ci_low" in metrics:
        ci = f" ({level:.0%} CI {metrics['pass_at_1_repair_ci_low']:.3f}–{metrics['pass_at_1_repair_ci_high']:.3f})"
    score = f"- Score: pass@1 {float(rates.mean()):.3f}{ci} over {n} tasks × {samples} sample(s)"
    score += f", SE {100 * noise['se']:.1f} points"
    factor = mde_factor(level, n)
    unrelated = factor * math.sqrt(2) * noise["se"]
    if noise["se_data"] is None:
        lines.append(score + "; with one sample per task data noise and prediction noise cannot be told apart.")
        related = ""
    else:
        which = dominant(noise["se_data"], noise["se_prediction"], k_mean)
        cure = "more tasks, not more samples" if which == "data" else "more samples per task (or seeds)"
        lines.append(
            score + f": data noise {100 * noise['se_data']:.1f}, prediction noise "
            f"{100 * noise['se_prediction'] / math.sqrt(k_mean):.1f} at these samples; {which} noise dominates, "
            f"so {cure} would narrow it most."
        )
        related = (
            f"; {100 * factor * math.sqrt(2 / k_mean) * noise['se_prediction']:.1f} points against a model that "
            "solves the same tasks (prediction noise only)"
        )
    lines.append(
        f"- To be told apart from another run of this size (paired over these {n} tasks, {level:.0%} level, 80% "
        f"power), a difference must be at least {100 * unrelated:.1f} points against a model whose per-task "
        f"rates are unrelated to this one's{related}. Smaller differences are not evidence of a ranking."
    )
    s = stability({r["task_id"]: (r["scored_repair"], r["passed_repair"]) for r in rows if r["scored_repair"]})
    lines.append(f"- Tasks across this run's samples: {stability_line(s)}.")
    lines.append(f"- Verdicts: {_flaky(cfg, metrics)}.")
    lines.append(f"- Memorisation: {_twins(cfg)}.")
    return lines


def _flaky(cfg, metrics: dict) -> str:
    """How often each candidate was judged and how many verdicts changed (harness randomness)."""
    repeats = getattr(getattr(cfg, "judging", None), "repeats", 1)
    if repeats < 2:
        return "judged once each (judging.repeats=1): the harness's own randomness was not measured"
    flaky = int(metrics.get("flaky_verdicts_repair", 0))
    return f"each distinct candidate judged {repeats} times; {flaky} final verdict(s) changed between runs (flaky)"
