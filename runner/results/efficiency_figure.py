"""The per-task efficiency figure: each task's instruction ratio to its reference, per run, on a log scale.

    efficiency.png   per task: each measured passing sample (dots) and the geometric mean with its bootstrap CI
                     (a marker with error bars), one colour per run; a line at 1.0 (the reference's cost) and
                     at the slow-pass ratio; the too_slow answers (stopped at the budget) counted above each task

A job writes it into figures/ when it measured efficiency (runner.results.job_figures); `runner.report` writes it for
the runs it reads.
"""

from __future__ import annotations

from pathlib import Path

from runner.results.efficiency_scores import TaskEfficiency, task_scores
from runner.results.job_folder import Job, natural_key
from runner.results.report_figures import pyplot, save, title

EFFICIENCY = "efficiency.png"
COLOURS = ("#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363", "#d6616b", "#8c6d31", "#17becf")


def job_scores(job: Job) -> dict[str, TaskEfficiency]:
    """A job's per-task efficiency, scored with its own settings."""
    scored = task_scores(job.records, job.slow_ratio, job.lean_ratio, job.ci_level, job.resamples, job.boot_seed)
    return {t.task_id: t for t in scored}


def has_efficiency(jobs: list[Job]) -> bool:
    """Whether any of the jobs measured a passing answer's efficiency."""
    return any(r.efficiency is not None for j in jobs for r in j.records)


def efficiency_figure(jobs: list[Job]):
    """Per task (x) the instruction ratio (y, log scale) of each run; see the module docstring."""
    plt = pyplot()
    scores = [job_scores(j) for j in jobs]
    tasks = sorted(set().union(*scores), key=natural_key)
    size = (max(6.5, 0.45 * len(tasks) * max(1, len(jobs)) ** 0.5 + 2.0), 5.0)
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    width = 0.7 / max(1, len(jobs))
    top = 1.0
    for k, (job, by_task) in enumerate(zip(jobs, scores, strict=True)):
        colour = COLOURS[k % len(COLOURS)]
        xs, geo, low, high = [], [], [], []
        for i, task in enumerate(tasks):
            t = by_task.get(task)
            if t is None:
                continue
            x = i + (k - (len(jobs) - 1) / 2) * width
            if t.samples_ratios:
                ax.scatter([x] * len(t.samples_ratios), t.samples_ratios, s=10, color=colour, alpha=0.4, linewidths=0)
                top = max(top, *t.samples_ratios)
            if t.instructions_ratio is not None:
                xs.append(x)
                geo.append(t.instructions_ratio)
                low.append(t.instructions_ratio - t.instructions_ratio_ci_low)
                high.append(t.instructions_ratio_ci_high - t.instructions_ratio)
            if t.too_slow:
                ax.annotate(f"{t.too_slow} too slow", (x, 1), xycoords=("data", "axes fraction"), xytext=(0, -4),
                            textcoords="offset points", ha="center", va="top", rotation=90, fontsize=6,
                            color=colour)  # fmt: skip
        label = job.label or f"{job.model} s{job.seed}"
        ax.errorbar(xs, geo, yerr=[low, high], fmt="D", color=colour, markersize=5, capsize=3, label=label)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=1.0)
    ax.text(len(tasks) - 0.5 if tasks else 0.5, 1.0, " reference", va="bottom", ha="right", fontsize=7)
    slow = jobs[0].slow_ratio if jobs else 10.0
    if top >= slow / 2:
        ax.axhline(slow, color="#d62728", linewidth=0.8, linestyle="--")
        ax.text(-0.5, slow, f" slow pass (> {slow:g}x)", va="bottom", ha="left", fontsize=7, color="#d62728")
    slanted = len(tasks) > 4
    ax.set_xticks(
        range(len(tasks)), tasks, rotation=60 if slanted else 0, ha="right" if slanted else "center", fontsize=7
    )
    ax.set_xlim(-0.6, max(len(tasks), 1) - 0.4)
    ax.set_ylabel("instructions / the reference's (log scale)")
    level = round(100 * jobs[0].ci_level) if jobs else 95
    ax.set_xlabel(f"dots: passing samples; diamonds: geometric mean, error bars {level}% bootstrap CI over samples",
                  fontsize=8)  # fmt: skip
    if not tasks:
        ax.text(0.5, 0.5, "no passing answer was measured", transform=ax.transAxes, ha="center", fontsize=9)
    elif len(jobs) > 1:
        ax.legend(fontsize=7, loc="best")
    title(fig, "Efficiency: instructions per passing answer against the reference", jobs, size[0])
    return fig


def write_efficiency_figure(jobs: list[Job], path: Path) -> Path:
    """Write `efficiency_figure(jobs)` as a PNG at `path`."""
    return save(efficiency_figure(jobs), path)
