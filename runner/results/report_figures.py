"""The report's two figures: pass counts per run, and the per-task outcome heat map."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

from runner.results.job_folder import Job, natural_key
from runner.results.scoring import task_table

OUTCOME_COLOURS = {
    "passed": "#2ca02c",
    "failed": "#d62728",
    "error": "#ff7f0e",
    "timeout": "#9467bd",
    "resource_exceeded": "#8c564b",
    "no_code": "#7f7f7f",
    "syntax_error": "#e377c2",
    "policy_rejected": "#bcbd22",
    "signature_mismatch": "#17becf",
    "backend_error": "#c7c7c7",
    "harness_error": "#000000",
    "patch_failed": "#aec7e8",
    "patch_forbidden": "#ffbb78",
    "": "#ffffff",  # task not run in this job
}


HEATMAP_PANEL_ROWS = 80  # tasks per heat-map panel: more tasks are split into panels side by side
_ROW_IN = 0.14  # inches per task row: a 6-point label per row, no overlap
_COLUMN_IN = 0.32  # inches per run column


def scope(jobs: list[Job]) -> str:
    """One line naming the task set(s), model(s) and seed(s) the jobs cover (for titles)."""

    def listed(values) -> str:
        return ", ".join(str(v) for v in sorted(set(values), key=lambda v: natural_key(str(v))))

    sets = listed(j.task_set for j in jobs)
    return f"task set {sets} · model {listed(j.model for j in jobs)} · seed {listed(j.seed for j in jobs)}"


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def title(fig, what: str, jobs: list[Job], width_in: float) -> None:
    """A figure title that wraps to the figure's width (about 11 characters per inch at 10 points)."""
    text = "\n".join(textwrap.wrap(f"{what} | {scope(jobs)}", width=max(30, int(width_in * 11))))
    fig.suptitle(text, fontsize=10)


def outcome_grid(cells: list[list[str]]) -> tuple[dict[str, str], list[str], list[list[int]]]:
    """The colour of each outcome, their names in order and `cells` as indexes into them; an outcome this
    module does not know is shown in magenta, not hidden."""
    colours = dict(OUTCOME_COLOURS)
    for outcome in sorted({c for line in cells for c in line} - set(colours)):
        colours[outcome] = "#ff00ff"
    names = list(colours)
    return colours, names, [[names.index(c) for c in line] for line in cells]


def pass_counts_figure(jobs: list[Job]):
    """Bar chart: tasks passed (pass@1 x scored tasks) per run, first vs after repair, CI error bars."""
    import numpy as np

    plt = pyplot()
    x = np.arange(len(jobs))
    width = 0.38
    label_in = max(len(j.label) for j in jobs) * 0.06  # rotated labels need room below the axes
    size = (max(6.0, 0.9 * len(jobs) + 2.5), 4.0 + label_in)
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    for offset, stage, label, colour in ((-0.5, "first", "first attempt", "#9ecae1"),
                                         (0.5, "repair", "after repair", "#3182bd")):  # fmt: skip
        key = f"pass_at_1_{stage}"
        heights, low, high = [], [], []
        for j in jobs:
            m, n = j.metrics, j.metrics.get(f"{key}_tasks", 0.0)
            value = m.get(key, 0.0) * n
            heights.append(value)
            low.append(value - m.get(f"{key}_ci_low", 0.0) * n)
            high.append(m.get(f"{key}_ci_high", 0.0) * n - value)
        bars = ax.bar(x + offset * width, heights, width, yerr=[low, high], capsize=4,
                      label=label, color=colour, edgecolor="black", linewidth=0.5)  # fmt: skip
        if len(jobs) <= 12:
            ax.bar_label(bars, labels=[f"{h:.3g}" for h in heights], padding=2, fontsize=8)
    rotated = len(jobs) > 1
    ax.set_xticks(x, [j.label for j in jobs], rotation=30 if rotated else 0, ha="right" if rotated else "center")
    ax.set_ylabel("tasks passed (pass@1 x scored tasks)")
    ax.set_ylim(0, max([j.metrics.get("tasks", 1) for j in jobs] + [1]) * 1.3)
    level = round(100 * jobs[0].ci_level)
    ax.legend(loc="upper left", ncol=2, fontsize=8, title=f"error bars: {level}% bootstrap CI", title_fontsize=8)
    title(fig, "Tasks passed: first attempt vs after repair", jobs, size[0])
    return fig


def heatmap_figure(jobs: list[Job]):
    """Heat map: task x run, each cell coloured by the task's final outcome; "R" marks a repair fix.

    Task ids sort naturally; more than HEATMAP_PANEL_ROWS tasks are split into panels side by side, so
    every task keeps a readable label at 164 or 378 tasks.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    plt = pyplot()
    rows = [{r["task_id"]: r for r in task_table(j.records)} for j in jobs]
    tasks = sorted(set().union(*rows), key=natural_key)
    cells = [[row.get(t, {}).get("outcome_repair", "") for row in rows] for t in tasks]
    colours, names, grid = outcome_grid(cells)
    panels = max(1, math.ceil(len(tasks) / HEATMAP_PANEL_ROWS))
    per_panel = max(1, math.ceil(len(tasks) / panels))
    id_in = max([len(t) for t in tasks] + [4]) * 0.055  # a 6-point task id, per character
    label_in = max(len(j.label) for j in jobs) * 0.065  # the run labels under each panel
    panel_in = _COLUMN_IN * len(jobs) + id_in + 0.3
    size = (max(6.0, panels * panel_in + 0.4), _ROW_IN * per_panel + label_in + 2.2)
    fig, axes = plt.subplots(1, panels, figsize=size, layout="constrained", squeeze=False)
    cmap = ListedColormap(list(colours.values()))
    for p, ax in enumerate(axes[0]):
        lo, hi = p * per_panel, min(len(tasks), (p + 1) * per_panel)
        ax.imshow(grid[lo:hi] or [[0] * len(jobs)], cmap=cmap, vmin=0, vmax=len(names) - 1,
                  aspect="auto", interpolation="nearest")  # fmt: skip
        for i, t in enumerate(tasks[lo:hi]):
            for k, row in enumerate(rows):
                r = row.get(t)
                if r and r["outcome_first"] != "passed" and r["outcome_repair"] == "passed":
                    ax.text(k, i, "R", ha="center", va="center", fontsize=5, color="white", fontweight="bold")
        ax.set_xticks([k - 0.5 for k in range(1, len(jobs))], minor=True)
        ax.set_yticks([i - 0.5 for i in range(1, hi - lo)], minor=True)
        ax.grid(which="minor", color="white", linewidth=0.8)
        ax.tick_params(which="minor", length=0)
        ax.set_xticks(range(len(jobs)), [j.label for j in jobs], rotation=90, fontsize=7)
        ax.set_yticks(range(hi - lo), tasks[lo:hi], fontsize=6)
    used = sorted({names[v] for line in grid for v in line}, key=names.index)
    handles = [Patch(facecolor=colours[o], edgecolor="black", label=o or "not run") for o in used]
    handles = handles or [Patch(facecolor="white", edgecolor="black", label="no attempt recorded")]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 4), fontsize=7,
               title="final outcome (R = fixed by repair)", title_fontsize=7)  # fmt: skip
    title(fig, f"Final outcome per task ({len(tasks)} tasks)", jobs, size[0])
    return fig


def save(fig, path: Path) -> Path:
    """Write `fig` as a PNG at `path` (its folder made if missing) and close it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
    return path


def plot_pass_counts(jobs: list[Job], path: Path) -> Path:
    """Write pass_counts_figure(jobs) as a PNG."""
    return save(pass_counts_figure(jobs), path)


def plot_task_heatmap(jobs: list[Job], path: Path) -> Path:
    """Write heatmap_figure(jobs) as a PNG."""
    return save(heatmap_figure(jobs), path)
