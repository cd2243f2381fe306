"""A job's own figures, written into its folder's figures/ and logged to its MLflow run.

    figures/pass_at_1.png      pass@1 with its bootstrap CI: first attempt, after repair, and both policy-compliant
                               (on an EvalPlus set: base and base+plus)
    figures/task_outcomes.png  the outcome of every task (and sample): first attempt and after repair
    figures/efficiency.png     per task, the passing answers' instructions over the reference's (when measured:
                               runner.results.efficiency_figure)

The job writes them at its end (`figures_for_job`); `runner.report` on one job folder writes them again,
also for a job that failed or was killed (from what it recorded).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

from runner.results.efficiency_figure import EFFICIENCY, has_efficiency, write_efficiency_figure
from runner.results.job_folder import Job, natural_key
from runner.results.report_figures import outcome_grid, pyplot, save, title
from runner.results.scoring import group_samples

log = logging.getLogger(__name__)

PASS_AT_1 = "pass_at_1.png"
TASK_OUTCOMES = "task_outcomes.png"
MAX_SAMPLES_SHOWN = 10  # samples per task drawn in the outcome map; more are counted in the title
PANEL_ROWS = 80  # tasks per panel of the outcome map: more are split into panels side by side

BARS = (
    ("pass_at_1_first", "first attempt", "#9ecae1"),
    ("pass_at_1_repair", "after repair", "#3182bd"),
    ("pass_at_1_first_compliant", "policy-compliant\nfirst attempt", "#a1d99b"),
    ("pass_at_1_repair_compliant", "policy-compliant\nafter repair", "#31a354"),
)


EVALPLUS_BARS = (
    ("pass_at_1_first_base", "base\nfirst attempt", "#9ecae1"),
    ("pass_at_1_first_base_plus", "base+plus\nfirst attempt", "#3182bd"),
    ("pass_at_1_repair_base", "base\nafter repair", "#a1d99b"),
    ("pass_at_1_repair_base_plus", "base+plus\nafter repair", "#31a354"),
)


def bars(metrics: dict) -> tuple[tuple[str, str, str], ...]:
    """The bars of pass_at_1.png: EvalPlus's base and base+plus on an EvalPlus set (after repair only when a
    repair was tried), else first attempt, after repair and both policy-compliant."""
    if "pass_at_1_first_base" not in metrics:
        return BARS
    return EVALPLUS_BARS if metrics.get("repair_attempted") else EVALPLUS_BARS[:2]


def _samples_per_task(job: Job) -> int:
    return max([s.sample + 1 for s in group_samples(job.records)] + [0])


def pass_at_1_figure(job: Job):
    """pass@1 in % with CI error bars, a bar per score of `bars` (EvalPlus's base and base+plus on its sets)."""
    plt = pyplot()
    size = (7.5, 4.8)
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    m = job.metrics
    shown = bars(m)
    for x, (key, _, colour) in enumerate(shown):
        if key not in m:
            ax.text(x, 3, "n/a\n(nothing scored)", ha="center", va="bottom", fontsize=8)
            continue
        value, low, high = (100 * m.get(k, m[key]) for k in (key, f"{key}_ci_low", f"{key}_ci_high"))
        ax.bar(x, value, 0.6, color=colour, edgecolor="black", linewidth=0.5,
               yerr=[[value - low], [high - value]], capsize=6)  # fmt: skip
        ax.text(x, high + 2, f"{value:.1f}%\n[{low:.1f}, {high:.1f}]", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(shown)), [label for _, label, _ in shown], fontsize=8)
    ax.set_xlim(-0.6, len(shown) - 0.4)
    ax.set_ylim(0, 119)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("pass@1 (% of scored tasks)")
    scored = int(m.get("pass_at_1_repair_tasks", m.get("pass_at_1_first_tasks", 0)))
    samples = _samples_per_task(job)
    level = round(100 * job.ci_level)
    ax.set_xlabel(
        f"{scored} of {int(m.get('tasks', 0))} tasks scored, {samples} sample(s) per task; "
        f"error bars: {level}% bootstrap CI over tasks" + ("; job incomplete" if job.status != "finished" else ""),
        fontsize=8,
    )
    title(fig, "pass@1", [job], size[0])
    return fig


def _columns(samples: int) -> list[tuple[str, int, str]]:
    """(stage, sample, column label) of the outcome map: every shown sample's first attempt, then after repair."""
    shown = min(samples, MAX_SAMPLES_SHOWN)
    if shown <= 1:
        return [("first", 0, "first attempt"), ("repair", 0, "after repair")]
    return [(stage, s, f"{name} s{s}") for stage, name in (("first", "first"), ("repair", "repair"))
            for s in range(shown)]  # fmt: skip


def task_outcomes_figure(job: Job):
    """Task x (stage, sample) map, each cell coloured by its outcome; white where nothing was recorded."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    plt = pyplot()
    by_key = {(s.task_id, s.sample): s for s in group_samples(job.records)}
    tasks = sorted({t for t, _ in by_key}, key=natural_key)
    samples = _samples_per_task(job)
    columns = _columns(samples)

    def outcome(task: str, stage: str, sample: int) -> str:
        s = by_key.get((task, sample))
        rec = s.record(stage) if s is not None else None
        return rec.outcome.value if rec is not None else ""

    cells = [[outcome(t, stage, s) for stage, s, _ in columns] for t in tasks]
    colours, names, grid = outcome_grid(cells)
    panels = max(1, math.ceil(len(tasks) / PANEL_ROWS))
    per_panel = max(1, math.ceil(len(tasks) / panels))
    id_in = max([len(t) for t in tasks] + [4]) * 0.055
    panel_in = 0.45 * len(columns) + id_in + 0.4
    size = (max(6.5, panels * panel_in + 0.4), max(4.0, 0.16 * per_panel + 3.0))
    fig, axes = plt.subplots(1, panels, figsize=size, layout="constrained", squeeze=False)
    cmap = ListedColormap(list(colours.values()))
    for p, ax in enumerate(axes[0]):
        lo, hi = p * per_panel, min(len(tasks), (p + 1) * per_panel)
        ax.imshow(grid[lo:hi] or [[names.index("")] * len(columns)], cmap=cmap, vmin=0, vmax=len(names) - 1,
                  aspect="auto", interpolation="nearest")  # fmt: skip
        ax.set_xticks([k - 0.5 for k in range(1, len(columns))], minor=True)
        ax.set_yticks([i - 0.5 for i in range(1, hi - lo)], minor=True)
        ax.grid(which="minor", color="white", linewidth=1.0)
        ax.tick_params(which="minor", length=0)
        if len(columns) > 2:  # the boundary between the first attempts and the repairs
            ax.axvline(len(columns) / 2 - 0.5, color="black", linewidth=1.5)
        ax.set_xticks(range(len(columns)), [label for *_, label in columns], rotation=90 if len(columns) > 2 else 0,
                      fontsize=7)  # fmt: skip
        ax.set_yticks(range(hi - lo), tasks[lo:hi], fontsize=6 if len(tasks) > 30 else 8)
        ax.set_xlabel("attempt" if len(columns) == 2 else "attempt and sample", fontsize=8)
    axes[0][0].set_ylabel("task", fontsize=8)
    counts: dict[str, int] = {}
    for row in cells:
        for c in row:
            counts[c] = counts.get(c, 0) + 1
    used = sorted(counts, key=names.index)
    handles = [Patch(facecolor=colours[o], edgecolor="black", label=f"{o or 'not recorded'} ({counts[o]})")
               for o in used]  # fmt: skip
    handles = handles or [Patch(facecolor="white", edgecolor="black", label="no attempt recorded")]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 4), fontsize=7,
               title="outcome (cells)", title_fontsize=7)  # fmt: skip
    more = f"; first {MAX_SAMPLES_SHOWN} of {samples} samples shown" if samples > MAX_SAMPLES_SHOWN else ""
    incomplete = "; job incomplete" if job.status != "finished" else ""
    title(fig, f"Outcome per task, first attempt and after repair ({len(tasks)} tasks{more}{incomplete})", [job],
          size[0])  # fmt: skip
    return fig


def write_job_figures(job: Job, folder: Path) -> list[Path]:
    """Write pass_at_1.png and task_outcomes.png of `job` (metrics set) into `folder`, and efficiency.png when
    it measured efficiency; their paths."""
    folder = Path(folder)
    written = [save(pass_at_1_figure(job), folder / PASS_AT_1), save(task_outcomes_figure(job), folder / TASK_OUTCOMES)]
    if has_efficiency([job]):
        written.append(write_efficiency_figure([job], folder / EFFICIENCY))
    return written


def figures_for_job(cfg, out_dir: Path, records: list, metrics: dict, run=None) -> list[Path]:
    """At a job's end: write its figures into out_dir/figures/ and log them to its MLflow run (`run`, a
    runner.tracking.runs.JobRun, or None); returns the files written. A figure that fails is logged, never raised:
    the job's results stand without it."""
    job = Job(path=Path(out_dir), model=cfg.model.name, seed=cfg.seed, records=records, task_set=cfg.task_set.name,
              ks=tuple(cfg.scoring.k), ci_level=cfg.scoring.ci_level, metrics=metrics,
              resamples=cfg.scoring.bootstrap_resamples, boot_seed=cfg.scoring.bootstrap_seed,
              slow_ratio=cfg.efficiency.slow_ratio, lean_ratio=cfg.efficiency.lean_ratio)  # fmt: skip
    folder = Path(out_dir) / "figures"
    try:
        written = write_job_figures(job, folder)
    except Exception as exc:
        log.warning("figures not written (%s: %s); the job's results are unaffected", type(exc).__name__, exc)
        return []
    if run is not None:
        try:
            run.client.log_artifacts(run.run_id, str(folder), "figures")
        except Exception as exc:  # a busy store must not fail a finished job
            log.warning("figures not logged to MLflow run %s: %s", run.run_id, exc)
    return written
