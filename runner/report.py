"""Cross-run reports: a Markdown table, seed spread, paired comparisons and figures.

    python -m runner.report multirun/2026-11-30/12-00-00 [out=DIR]
    python -m runner.report outputs/a outputs/b out=reports/ab
    python -m runner.report --experiment runner --tracking-uri sqlite:///mlruns/mlflow.db [--parent RUN_ID]

A path that is a job folder (attempts.jsonl, config.yaml or .hydra/config.yaml: a job that failed or was
killed is read too, with what it recorded) is read as one job; any other path is a sweep folder whose job
subfolders are read. Each job's model name, seed, task set and scoring settings come from the config as
the job resolved it (runner.results.job_folder), falling back to the records themselves; any extra metric its
summary.json has (e.g. policy-compliant pass@k) is shown too. Writes report.md, report.json,
pass_counts.png, task_heatmap.png and, under figures/, the job's pass_at_1.png and task_outcomes.png (one
job) or sweep_pass_at_1.png and sweep_paired.png (several), and where answers were measured for efficiency
(runner.efficiency) its table, figures/efficiency.png (one job) or efficiency.png (several), to the folder
given (for several, the first one; for --experiment, the folder the runs are downloaded into) unless out=DIR
(or --out DIR) names another, and prints the Markdown.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from runner.records import AttemptRecord
from runner.results.compare import compare_jobs, seed_spread, seeds_label
from runner.results.comparison_text import COMPARISONS_NOTE, comparison_sentence, seed_warnings
from runner.results.dataset_record import DATASET_FILE
from runner.results.efficiency_figure import EFFICIENCY, has_efficiency, write_efficiency_figure
from runner.results.efficiency_scores import score_records
from runner.results.efficiency_tables import headline, ratio_text, task_lines
from runner.results.job_figures import write_job_figures
from runner.results.job_folder import FINISHED, Job, find_job_dirs, load_job, natural_key
from runner.results.report_figures import plot_pass_counts, plot_task_heatmap, scope
from runner.results.scoring import scoring_notes, summarize
from runner.results.stability import pooled_counts, stability, stability_line
from runner.results.sweep_figures import write_sweep_figures
from runner.results.twin_scores import twin_scores
from runner.results.twin_summary import report_lines, twin_map, twins_made


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def _with_ci(m: dict, name: str) -> str:
    if name not in m:
        return "n/a"
    return f"{_pct(m[name])} [{_pct(m[name + '_ci_low'])}, {_pct(m[name + '_ci_high'])}]"


def _outcome_breakdown(m: dict, stage: str) -> str:
    parts = []
    for key, value in sorted(m.items(), key=lambda kv: (-kv[1], kv[0])):
        prefix = f"outcome_{stage}_"
        if key.startswith(prefix) and key.endswith("_count") and value:
            parts.append(f"{key[len(prefix) : -len('_count')]} {int(value)}")
    return ", ".join(parts)


def _run_table(jobs: list[Job]) -> list[str]:
    level = round(100 * jobs[0].ci_level)
    lines = [
        f"| model | seed | task set | tasks | samples | pass@1 first % [{level}% CI] | pass@1 after repair % "
        f"[{level}% CI] | repair fixed/attempted | gate rejects (first) | unscored | final outcomes "
        "| policy-compliant pass@1 first / after repair % | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for j in jobs:
        m = j.metrics
        scored = int(min(m.get("pass_at_1_first_tasks", 0), m.get("pass_at_1_repair_tasks", 0)))
        tasks = f"{int(m['tasks'])}" + (f" ({scored} scored)" if scored < m["tasks"] else "")
        lines.append(
            f"| {j.model} | {j.seed} | {j.task_set} | {tasks} | {int(m['samples'])} | "
            f"{_with_ci(m, 'pass_at_1_first')} | {_with_ci(m, 'pass_at_1_repair')} | "
            f"{int(m['repair_fixed'])}/{int(m['repair_attempted'])} | {int(m['gate_rejections_first'])} | "
            f"{int(m['unscored_samples'])} | {_outcome_breakdown(m, 'repair')} | "
            f"{_pct(m.get('pass_at_1_first_compliant'))} / {_pct(m.get('pass_at_1_repair_compliant'))} | {j.status} |"
        )
    return lines


def _suite_table(jobs: list[Job]) -> list[str]:
    lines = [
        "| model | seed | task set | first: visible | first: +hidden | first: all | repair: visible | "
        "repair: +hidden | repair: all |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for j in jobs:
        cells = [
            _pct(j.metrics.get(f"pass_at_1_{stage}_{level}"))
            for stage in ("first", "repair")
            for level in ("visible", "visible_hidden", "all")
        ]
        lines.append(f"| {j.model} | {j.seed} | {j.task_set} | " + " | ".join(cells) + " |")
    return lines


_CI_PARTS = ("_ci_low", "_ci_high", "_tasks")
_LEVELS = ("_visible", "_visible_hidden", "_all")
_IN_RUN_TABLE = ("pass_at_1_first", "pass_at_1_repair")


def pass_at_k_names(jobs: list[Job]) -> list[str]:
    """Every pass@k metric the jobs have (recomputed or from their summary.json), suite levels aside."""
    names = {
        key
        for j in jobs
        for key in j.metrics
        if re.match(r"pass_at_\d+_", key) and not key.endswith(_CI_PARTS) and not key.endswith(_LEVELS)
    }
    return sorted(names, key=natural_key)


def _pass_at_k_table(jobs: list[Job]) -> list[str]:
    names = pass_at_k_names(jobs)
    if set(names) <= set(_IN_RUN_TABLE):
        return []
    level = round(100 * jobs[0].ci_level)
    header = " | ".join(n.replace("pass_at_", "pass@").replace("_", " ", 1) for n in names)
    lines = [f"| model | seed | task set | {header} |", "|---|---|---|" + "---|" * len(names)]
    for j in jobs:
        cells = [_with_ci(j.metrics, n) for n in names]
        lines.append(f"| {j.model} | {j.seed} | {j.task_set} | " + " | ".join(cells) + " |")
    return [f"% [{level}% CI]; n/a where a run has no such metric", "", *lines]


def _spread_lines(jobs: list[Job]) -> tuple[list[str], dict]:
    by_model: dict[tuple[str, str], dict[int, list[AttemptRecord]]] = defaultdict(dict)
    for j in jobs:
        by_model[(j.model, j.task_set)].setdefault(j.seed, j.records)
    lines, data = [], {}
    for (model, task_set), runs in by_model.items():
        if len(runs) < 2:
            continue
        s = seed_spread(runs, jobs[0].ci_level, jobs[0].resamples, jobs[0].boot_seed)
        data[f"{model} on {task_set}"] = s
        parts = []
        for stage, label in (("first", "first"), ("repair", "after repair")):
            if f"{stage}_mean" in s:
                parts.append(
                    f"{label} {_pct(s[f'{stage}_mean'])} (seed std {_pct(s[f'{stage}_std'])}, "
                    f"min {_pct(s[f'{stage}_min'])}, max {_pct(s[f'{stage}_max'])}; mean within-seed CI "
                    f"width {_pct(s[f'{stage}_ci_width_mean'])})"
                )
        lines.append(f"- **{model}** on {task_set} over {s['seeds']} seeds: " + "; ".join(parts))
    return lines, data


def _compare_lines(comparisons: list[dict]) -> list[str]:
    """The loud seed warnings first, then a sentence per comparison (runner.results.comparison_text), with the
    paired efficiency line where both measured."""
    lines = seed_warnings(comparisons)
    lines += [""] if lines else []
    for r in comparisons:
        lines.append(comparison_sentence(r))
        if "efficiency_ratio" in r:  # runner.results.efficiency_scores.paired_efficiency
            ratio = ratio_text(r["efficiency_ratio"], r["efficiency_ratio_ci_low"], r["efficiency_ratio_ci_high"],
                               r["ci_level"])  # fmt: skip
            head = f"- {r['model_a']} vs {r['model_b']} on {r['task_set']}, {seeds_label(r)}, after repair"
            lines.append(
                f"{head}, efficiency: {r['model_a']}'s instructions ratio over {r['model_b']}'s {ratio}, geometric "
                f"mean over the {r['efficiency_tasks']} task(s) both passed and measured (< 1: {r['model_a']} leaner)"
            )
    return lines


def _stability_lines(jobs: list[Job]) -> tuple[list[str], dict]:
    """Per model and task set, each task stable-pass / stable-fail / unstable over all its seeds and samples."""
    by_model: dict[tuple[str, str], list[Job]] = defaultdict(list)
    for j in jobs:
        by_model[(j.model, j.task_set)].append(j)
    lines, data = [], {}
    for (model, task_set), runs in by_model.items():
        s = stability(pooled_counts(j.records for j in runs))
        data[f"{model} on {task_set}"] = s
        seeds = ", ".join(str(j.seed) for j in runs)
        lines.append(f"- **{model}** on {task_set} (seed(s) {seeds}, after repair): {stability_line(s)}")
    return lines, data


def _efficiency_lines(jobs: list[Job]) -> list[str]:
    """Per run that measured efficiency: its headline and per-task table (runner.results.efficiency_tables)."""
    lines = []
    for j in jobs:
        if j.metrics.get("efficiency_passes"):
            _, by_task = score_records(j.records, j.slow_ratio, j.lean_ratio, j.ci_level, j.resamples, j.boot_seed)
            lines += [f"- **{j.label}**: {headline(j.metrics, j.slow_ratio, j.lean_ratio, j.ci_level)}", ""]
            lines += [*task_lines(list(by_task.values()), j.ci_level), ""]
    return lines


def _status_notes(jobs: list[Job]) -> list[str]:
    """A line per job that did not finish: what it left behind."""
    notes = []
    for j in jobs:
        if j.status != FINISHED:
            samples = len({(r.task_id, r.sample) for r in j.records})
            what = f"{samples} sample(s) recorded" if samples else "no attempt recorded"
            notes.append(f"- {j.label}: incomplete (no summary.json: the job failed or was killed); {what}")
    return notes


def make_report(job_dirs: list[Path], out_dir: Path) -> Path:
    """Score every job, write report.md, report.json and the figures (`report_figures`); return report.md."""
    if not job_dirs:
        raise ValueError("make_report: no job folders (a job folder holds attempts.jsonl or config.yaml)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = sorted((load_job(d) for d in job_dirs), key=lambda j: (j.task_set, j.model, j.seed, str(j.path)))
    seen: dict[tuple[str, int, str], int] = defaultdict(int)
    for j in jobs:
        seen[(j.model, j.seed, j.task_set)] += 1
    several_sets = len({j.task_set for j in jobs}) > 1
    twin_scored = []
    for j in jobs:
        twins = twin_map(twins_made(j.path))
        if twins:  # the twins' records are scored apart; every other figure is the originals'
            scores = twin_scores(j.records, twins, j.ci_level)
            j.records = [r for r in j.records if r.task_id not in twins]
            twin_scored.append((j, scores))
    for j in jobs:
        j.label = f"{j.model} s{j.seed}" + (f" {j.task_set}" if several_sets else "")
        j.label += f" ({j.path.name})" if seen[(j.model, j.seed, j.task_set)] > 1 else ""
        extra = {k: v for k, v in j.recorded.items() if isinstance(v, int | float) and not isinstance(v, bool)}
        j.metrics = {**extra, **summarize(j.records, j.ks, j.ci_level, j.resamples, j.boot_seed)}
        j.metrics.update(score_records(j.records, j.slow_ratio, j.lean_ratio, j.ci_level, j.resamples, j.boot_seed)[0])

    lines = ["# Run report", "", scope(jobs), ""]
    lines += [f"{len(jobs)} job(s): " + ", ".join(f"`{j.path}`" for j in jobs), ""]
    lines += ["## Pass@1 per run", "", *_run_table(jobs), ""]
    pass_at_k = _pass_at_k_table(jobs)
    if pass_at_k:
        lines += ["## Every pass@k metric per run", "", *pass_at_k, ""]
    lines += ["## Pass@1 by suite level (visible / visible+hidden / all suites)", "", *_suite_table(jobs), ""]
    efficiency = _efficiency_lines(jobs)
    if efficiency:
        lines += ["## Efficiency (passing answers' cost over the reference's; geometric means)", "", *efficiency]
    spread, spread_data = _spread_lines(jobs)
    if spread:
        lines += ["## Seed-to-seed spread", "", *spread, ""]
    stable, stability_data = _stability_lines(jobs)
    lines += ["## Task stability across seeds and samples (model randomness)", "", *stable, ""]
    compare_data = compare_jobs(jobs)
    compare = _compare_lines(compare_data)
    if compare:
        lines += ["## Paired comparisons (shared scored tasks)", "", COMPARISONS_NOTE, "", *compare, ""]
    twin_lines = report_lines([(j.label, scores) for j, scores in twin_scored])
    if twin_lines:
        lines += ["## Twins: skill or memory (drop = original − twin, first attempt, paired over tasks)", ""]
        lines += [*twin_lines, ""]
    notes = _status_notes(jobs) + [f"- {j.label}: {n}" for j in jobs for n in scoring_notes(j.records, j.ks)]
    if notes:
        lines += ["## Notes", "", *notes, ""]
    if len(jobs) == 1:  # one job: its own figures (a job that stopped early never wrote them)
        figures, missing = write_job_figures(jobs[0], out_dir / "figures"), []
    else:
        figures, missing = write_sweep_figures(jobs, compare_data, out_dir / "figures")
    plot_pass_counts(jobs, out_dir / "pass_counts.png")
    plot_task_heatmap(jobs, out_dir / "task_heatmap.png")
    figures = [out_dir / "pass_counts.png", out_dir / "task_heatmap.png", *figures]
    if len(jobs) > 1 and has_efficiency(jobs):  # one job's is among its own figures
        figures.append(write_efficiency_figure(jobs, out_dir / EFFICIENCY))
    lines += ["## Figures", "", *missing]
    lines += [part for p in figures for part in (f"![{p.stem}]({p.relative_to(out_dir).as_posix()})", "")]

    report = out_dir / "report.md"
    report.write_text("\n".join(lines))
    data = {
        "runs": [
            {
                "path": str(j.path),
                "model": j.model,
                "seed": j.seed,
                "task_set": j.task_set,
                "status": j.status,
                "metrics": j.metrics,
            }  # fmt: skip
            for j in jobs
        ],
        "seed_spread": spread_data,
        "stability": stability_data,
        "comparisons": compare_data,
        "twins": {j.label: scores for j, scores in twin_scored},
        "figures": [p.relative_to(out_dir).as_posix() for p in figures],
    }
    (out_dir / "report.json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    return report


def pull_from_mlflow(experiment: str, tracking_uri: str, dest: Path, parent: str | None = None) -> list[Path]:
    """Download attempts.jsonl and config.yaml of an experiment's job runs into dest/<run name>/."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        raise SystemExit(f"no experiment {experiment!r} at {tracking_uri}")
    query = f"tags.mlflow.parentRunId = '{parent}'" if parent else ""
    jobs = []
    for run in client.search_runs([exp.experiment_id], filter_string=query, max_results=5000):
        if run.data.tags.get("runner.role") == "sweep":
            continue
        job = Path(dest) / f"{run.info.run_name or 'run'}_{run.info.run_id[:8]}"
        (job / ".hydra").mkdir(parents=True, exist_ok=True)
        try:
            client.download_artifacts(run.info.run_id, "attempts.jsonl", str(job))
            client.download_artifacts(run.info.run_id, "config.yaml", str(job / ".hydra"))
        except Exception as exc:  # a run without the artifacts (failed early) is skipped, loudly
            print(f"skipping run {run.info.run_id}: {exc}", file=sys.stderr)
            continue
        try:  # which data the run scored, so that runs on other data are not paired (older runs have none)
            client.download_artifacts(run.info.run_id, DATASET_FILE, str(job))
        except Exception:
            pass
        jobs.append(job)
    return jobs


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m runner.report", description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="sweep directories or job directories")
    parser.add_argument("--out", type=Path, help="output directory, also as out=DIR (default: the folder given)")
    parser.add_argument("--experiment", help="read job runs of this MLflow experiment instead of paths")
    parser.add_argument("--tracking-uri", default="sqlite:///mlruns/mlflow.db")
    parser.add_argument("--parent", help="with --experiment: only the runs nested under this sweep run")
    argv = sys.argv[1:] if argv is None else list(argv)
    argv = [part for a in argv for part in (["--out", a[4:]] if a.startswith("out=") else [a])]
    args = parser.parse_args(argv)

    if args.experiment:
        tmp = Path(tempfile.mkdtemp(prefix="runner-report-"))
        jobs = pull_from_mlflow(args.experiment, args.tracking_uri, tmp, args.parent)
        out = args.out or tmp
    else:
        if not args.paths:
            parser.error("give sweep/job directories or --experiment")
        jobs = find_job_dirs(args.paths)
        out = args.out or args.paths[0]
    if not jobs:
        where = "in the runs of --experiment" if args.experiment else "in " + ", ".join(map(str, args.paths))
        print(f"no job folder (attempts.jsonl or config.yaml) {where}: give a job or sweep folder", file=sys.stderr)
        return 2
    report = make_report(jobs, out)
    print(report.read_text())
    written = json.loads((report.parent / "report.json").read_text())["figures"]
    print(f"written: {report}, {report.parent / 'report.json'}, " + ", ".join(str(out / f) for f in written),
          file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
