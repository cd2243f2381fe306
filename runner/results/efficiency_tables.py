"""Efficiency scores as text: the job summary's `efficiency:` block and the per-task table (runner.evaluate's too)."""

from __future__ import annotations

from collections.abc import Sequence

from runner.results.efficiency_scores import PREFIX


def ratio_text(value: float | None, low: float | None = None, high: float | None = None, level: float = 0.95) -> str:
    """`1.84x` or `1.84x (95% CI 1.21-2.90)`; `n/a` for None."""
    if value is None:
        return "n/a"
    ci = f" ({level:.0%} CI {low:.3g}-{high:.3g})" if low is not None and high is not None else ""
    return f"{value:.3g}x{ci}"


def task_lines(rows: Sequence[dict], level: float = 0.95) -> list[str]:
    """A Markdown table, one line per task row holding `efficiency_...` columns (TaskEfficiency.row()); rows
    without them are left out."""
    rows = [r for r in rows if r.get(PREFIX + "passes")]
    if not rows:
        return []
    graded = any(r.get(PREFIX + "dps") is not None for r in rows)
    lines = [
        f"| task | passing samples measured | instructions ratio ({level:.0%} CI) | memory ratio | slow passes "
        "| lean passes | too slow | errors |" + (" DPS |" if graded else ""),
        "|---|---|---|---|---|---|---|---|" + ("---|" if graded else ""),
    ]
    for r in rows:
        e = {k[len(PREFIX) :]: v for k, v in r.items() if k.startswith(PREFIX)}
        ratio = ratio_text(
            e["instructions_ratio"], e["instructions_ratio_ci_low"], e["instructions_ratio_ci_high"], level
        )
        dps = "" if not graded else (" n/a |" if e.get("dps") is None else f" {e['dps']:.1f} |")
        lines.append(
            f"| {r['task_id']} | {e['measured']}/{e['passes']} | {ratio} | {ratio_text(e['memory_ratio'])} "
            f"| {e['slow_passes']} | {e['lean_passes']} | {e['too_slow']} | {e['errors']} |{dps}"
        )
    return lines


def headline(metrics: dict, slow_ratio: float, lean_ratio: float, level: float = 0.95) -> str:
    """One line: the job's geometric-mean ratios and the sample counts (from `efficiency_metrics`)."""
    m = {k[len(PREFIX) :]: v for k, v in metrics.items() if k.startswith(PREFIX)}
    key = "instructions_ratio"
    ratio = ratio_text(m.get(key), m.get(f"{key}_ci_low"), m.get(f"{key}_ci_high"), level)
    tasks = int(m.get(f"{key}_tasks", 0))
    dps = f"; EvalPerf DPS {m['dps']:.1f} over {int(m['dps_tasks'])} task(s)" if "dps" in m else ""
    no_inputs = int(m.get("no_perf_inputs", 0))
    return (
        f"efficiency: instructions {ratio} the reference's over {tasks} task(s), peak memory "
        f"{ratio_text(m.get('memory_ratio'))}; {int(m['measured'])} of {int(m['passes'])} passing answers measured: "
        f"{int(m['slow_passes'])} slow (> {slow_ratio:g}x, too_slow included), {int(m['lean_passes'])} lean "
        f"(<= {lean_ratio:g}x), {int(m['too_slow'])} too_slow, {int(m['errors'])} error(s)"
        + (f", {no_inputs} without perf inputs" if no_inputs else "")
        + dps
    )


def summary_block(
    metrics: dict, rows: Sequence[dict], slow_ratio: float, lean_ratio: float, level: float = 0.95
) -> list[str]:
    """The job summary's efficiency block: the headline, then the per-task table; empty when nothing was measured."""
    if not metrics.get(PREFIX + "passes"):
        return []
    about = (
        "Cost of each passing final answer on the task's perf inputs over the reference's (instructions "
        "counted by valgrind, peak memory); geometric means, 1.0 = the reference's cost."
    )
    return ["", f"**{headline(metrics, slow_ratio, lean_ratio, level)}**", about, "", *task_lines(rows, level)]
