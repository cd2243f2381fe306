"""A sweep's figures, written into its folder's figures/ (runner.report; at a sweep's end,
runner.tracking.sweep_callback also logs them to the sweep's parent MLflow run).

    figures/sweep_pass_at_1.png  pass@1 of every model x seed side by side with its CI, first attempt and after repair
    figures/sweep_paired.png     the paired comparisons (runner.results.compare.compare_jobs): the difference in pass
                                 rate with its CI, p, MDE and verdict, inconclusive ones drawn hollow
"""

from __future__ import annotations

import re
import textwrap
from collections import defaultdict
from pathlib import Path

from runner.results.compare import is_pooled, is_seed_check, seeds_label
from runner.results.comparison_text import side, verdict_words
from runner.results.job_folder import FINISHED, Job, natural_key
from runner.results.report_figures import pyplot, save, title
from runner.results.verdicts import NO_DIFFERENCE

SWEEP_PASS_AT_1 = "sweep_pass_at_1.png"
SWEEP_PAIRED = "sweep_paired.png"
STAGES = (("first", "first attempt"), ("repair", "after repair"))
SEED_COLOURS = ("#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363", "#9ecae1", "#fdae6b", "#a1d99b")


def _groups(jobs: list[Job]) -> dict[str, list[Job]]:
    """The jobs by model (and task set, when the sweep has several), each group ordered by seed."""
    several_sets = len({j.task_set for j in jobs}) > 1
    groups: dict[str, list[Job]] = defaultdict(list)
    for j in jobs:
        groups[j.model + (f"\n{j.task_set}" if several_sets else "")].append(j)
    return {k: sorted(v, key=lambda j: (j.seed, str(j.path))) for k, v in sorted(groups.items())}


def sweep_pass_at_1_figure(jobs: list[Job]):
    """Two panels (first attempt, after repair): per model a bar per seed, pass@1 in % with CI error bars."""
    plt = pyplot()
    groups = _groups(jobs)
    seeds = sorted({j.seed for j in jobs})
    width = 0.8 / max(1, max(len(g) for g in groups.values()))
    size = (max(8.0, 2 * (1.2 * len(groups) * max(1, len(seeds)) * width + 1.5)), 5.2)
    fig, axes = plt.subplots(1, 2, figsize=size, layout="constrained", sharey=True)
    chars = max(6, int((size[0] / 2 - 0.6) / len(groups) * 11))  # 8-point characters that fit under a group
    for ax, (stage, stage_label) in zip(axes, STAGES, strict=True):
        key = f"pass_at_1_{stage}"
        for g, members in enumerate(groups.values()):
            for i, j in enumerate(members):
                x = g - 0.4 + width * (i + 0.5)
                colour = SEED_COLOURS[seeds.index(j.seed) % len(SEED_COLOURS)]
                if key not in j.metrics:
                    ax.text(x, 2, "n/a", ha="center", va="bottom", fontsize=7, rotation=90)
                    continue
                value, low, high = (100 * j.metrics[k] for k in (key, f"{key}_ci_low", f"{key}_ci_high"))
                hatch = "//" if j.status != FINISHED else None
                ax.bar(x, value, width * 0.92, color=colour, edgecolor="black", linewidth=0.5, hatch=hatch,
                       yerr=[[value - low], [high - value]], capsize=3)  # fmt: skip
                ax.text(x, high + 1.5, f"{value:.0f}%", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(groups)), [_wrapped(g, chars) for g in groups], fontsize=8)
        ax.set_title(stage_label, fontsize=9)
        ax.set_xlabel("model")
        ax.set_ylim(0, 112)
        ax.set_yticks(range(0, 101, 20))
    axes[0].set_ylabel("pass@1 (% of scored tasks)")
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=SEED_COLOURS[k % len(SEED_COLOURS)], edgecolor="black", label=f"seed {s}")
               for k, s in enumerate(seeds)]  # fmt: skip
    if any(j.status != FINISHED for j in jobs):
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label="job incomplete"))
    level = round(100 * jobs[0].ci_level)
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 6), fontsize=8,
               title=f"error bars: {level}% bootstrap CI over tasks", title_fontsize=8)  # fmt: skip
    title(fig, "pass@1 per model and seed", jobs, size[0])
    return fig


def _wrapped(label: str, chars: int) -> str:
    """`label` in lines of at most `chars` characters, broken after hyphens, underscores and dots where it can."""
    lines = []
    for part in label.split("\n"):
        line = ""
        for token in re.findall(r"[^-_.]*[-_.]|[^-_.]+", part):
            for piece in textwrap.wrap(token, chars, break_long_words=True) if len(token) > chars else [token]:
                if line and len(line) + len(piece) > chars:
                    lines.append(line)
                    line = ""
                line += piece
        lines.append(line)
    return "\n".join(lines)


def _row_label(r: dict) -> str:
    stage = dict(STAGES)[r["stage"]]
    return f"{side(r, 'a')} − {side(r, 'b')}\n{r['task_set']}, {seeds_label(r)}, {stage}"


def _drawn(r: dict) -> bool:
    return bool(r.get("tasks")) and r.get("diff_ci_low") is not None


def sweep_paired_figure(comparisons: list[dict], jobs: list[Job]):
    """Forest plot: per comparison, A's pass rate minus B's in points with its CI and verdict; an inconclusive one
    (no_detectable_difference) is drawn hollow and grey, and its MDE as a grey band around zero."""
    plt = pyplot()
    rows = [r for r in comparisons if _drawn(r)]
    rows.sort(
        key=lambda r: (
            r["task_set"],
            is_seed_check(r),
            is_pooled(r),
            natural_key(r["model_a"]),
            natural_key(r["model_b"]),
            str(r["seed_a"]),
            r["stage"] != "first",
        )
    )
    label_in = max([len(line) for r in rows for line in _row_label(r).split("\n")] + [10]) * 0.055
    size = (label_in + 4.5 + 4.2, max(3.5, 0.55 * len(rows) + 2.2))  # labels, the plot, the annotations
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows, strict=True):
        diff, low, high = (100 * r[k] for k in ("diff", "diff_ci_low", "diff_ci_high"))
        colour = "#3182bd" if r["stage"] == "first" else "#e6550d"
        decided = r["verdict"] != NO_DIFFERENCE
        if r.get("mde"):
            ax.plot([-100 * r["mde"], 100 * r["mde"]], [y, y], color="#d9d9d9", linewidth=7, solid_capstyle="butt")
        ax.errorbar(
            diff,
            y,
            xerr=[[diff - low], [high - diff]],
            fmt="o",
            capsize=4,
            markersize=6,
            color=colour if decided else "#969696",
            markerfacecolor=colour if decided else "white",
        )
        mde = "n/a" if r.get("mde") is None else f"{100 * r['mde']:.1f}"
        ax.annotate(
            f"{verdict_words(r)}: {diff:+.1f} [{low:+.1f}, {high:+.1f}], p = {r['p']:.2g}, MDE {mde}",
            (1.01, y),
            xycoords=("axes fraction", "data"),
            va="center",
            fontsize=7,
            fontweight="bold" if decided else "normal",
        )
    ax.axvline(0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks(ys, [_row_label(r) for r in rows], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    span = max([abs(100 * r[k]) for r in rows for k in ("diff_ci_low", "diff_ci_high")] + [5.0])
    ax.set_xlim(-span * 1.15, span * 1.15)
    level = round(100 * rows[0]["ci_level"]) if rows else 95
    ax.set_xlabel(
        f"difference in pass@1, A − B (points; {level}% CI, paired over shared tasks; grey band: the "
        "smallest difference detectable at 80% power)"
    )
    title(
        fig,
        "Paired comparisons (blue: first attempt, orange: after repair; hollow grey: no detectable difference)",
        jobs,
        size[0],
    )
    return fig


def write_sweep_figures(jobs: list[Job], comparisons: list[dict], folder: Path) -> tuple[list[Path], list[str]]:
    """Write sweep_pass_at_1.png and, when two models share scored tasks, sweep_paired.png into `folder`.

    Returns the files written and a line for each figure left out, saying why.
    """
    folder = Path(folder)
    written = [save(sweep_pass_at_1_figure(jobs), folder / SWEEP_PASS_AT_1)]
    if any(_drawn(r) for r in comparisons):
        written.append(save(sweep_paired_figure(comparisons, jobs), folder / SWEEP_PAIRED))
        return written, []
    why = "no two jobs share scored tasks" if comparisons else "one job per task set: nothing to pair"
    return written, [f"{SWEEP_PAIRED} not written: {why}.", ""]
