"""`python -m runner.audit`: the mutation audit of a task set's suites and the check of their declared
edge cases (runner.strength.mutation_audit does the work); the table, the reports and the MLflow run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from runner.cli import Option, boolean, parse_args, run
from runner.compose import compose_config
from runner.config import TrackingConfig
from runner.strength import mutants
from runner.strength import mutation_audit as strength_audit
from runner.strength.mutation_audit import AuditOptions, TaskAudit, audit_tasks, report_json, write_latest


def _edge_cell(audit: TaskAudit) -> str:
    """Declared edge cases exercised / declared ("-": none declared)."""
    declared = len(audit.edge_cases)
    return f"{declared - len(audit.edge_cases_missed)}/{declared}" if declared else "-"


def edge_case_lines(audits: Sequence[TaskAudit]) -> list[str]:
    """One line per task with declared edge cases that no test exercises or whose `when` raised.

    A single line when there is nothing to report: none missed, or none declared at all.
    """
    lines = []
    for a in audits:
        if a.edge_cases_missed:
            lines.append(f"{a.task_id}: edge cases not exercised: {', '.join(a.edge_cases_missed)}")
        for name, error in a.edge_case_errors.items():
            lines.append(f"{a.task_id}: edge case {name!r}: its `when` raised {error}")
    if lines:
        return lines
    declared = any(a.edge_cases for a in audits)
    return ["edge cases not exercised: none" if declared else "edge cases: none declared (task field `edge_cases`)"]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _cell(row: tuple[str, ...], index: int, width: int) -> str:
    return row[index].ljust(width) if index == 0 else row[index].rjust(width)


def format_table(audits: Sequence[TaskAudit]) -> str:
    """A plain-text table: one row per task, per-suite scores side by side."""
    header = ("task", "mutants", "killed", "survived", "timeout", "score", "visible", "hidden", "properties", "edge",
              "weak")  # fmt: skip
    rows = [header]
    for a in audits:
        s = a.score_by_suite
        weak = "ERROR" if a.error else ("WEAK" if a.weak else "")
        rows.append(
            (a.task_id, str(a.mutants), str(a.killed), str(a.survived), str(a.timeout), _pct(a.score))
            + tuple(_pct(s.get(c)) for c in ("visible", "hidden", "properties"))
            + (_edge_cell(a), weak)
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(_cell(r, i, w) for i, w in enumerate(widths)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def log_to_mlflow(
    audits: Sequence[TaskAudit],
    tracking: TrackingConfig,
    task_set_name: str,
    threshold: float,
    report_path: Path,
    seconds: float,
) -> str:
    """Log one MLflow run for this audit (experiment `<tracking.experiment>-audit`); return its id."""
    import mlflow

    from runner.tracking.runs import ensure_store

    uri = tracking.uri
    store = TrackingConfig(True, uri, f"{tracking.experiment}-audit", tracking.artifact_root)
    experiment_id = ensure_store(store)  # creates mlruns/ and the experiment when missing
    mlflow.set_tracking_uri(uri)
    scored = [a for a in audits if a.score is not None]
    with mlflow.start_run(experiment_id=experiment_id, run_name=f"audit-{task_set_name}") as run:
        mlflow.log_params({"task_set": task_set_name, "threshold": threshold, "tasks": len(audits)})
        metrics: dict[str, float] = {"weak_tasks": sum(a.weak for a in audits), "audit_seconds": seconds}
        metrics["edge_cases_missed"] = sum(len(a.edge_cases_missed) for a in audits)
        for a in audits:
            if a.edge_cases:
                metrics[f"edge_cases_missed.{a.task_id}"] = len(a.edge_cases_missed)
        for a in scored:
            metrics[f"score.{a.task_id}"] = a.score
            for suite in ("visible", "hidden", "properties"):
                if a.score_by_suite.get(suite) is not None:
                    metrics[f"score_{suite}.{a.task_id}"] = a.score_by_suite[suite]
        if scored:
            metrics["score_mean"] = sum(a.score for a in scored) / len(scored)
        mlflow.log_metrics(metrics)
        mlflow.log_artifact(str(report_path))
        return run.info.run_id


OPTIONS = (
    Option("out", "also write the report JSON here", metavar="FILE", default_text="<cache_dir>/audit/latest-*.json"),
    Option("threshold", "a task is weak below this score", default=0.9, type=float, metavar="X"),
    Option("workers", "parallel mutation runs", default=2, type=int, metavar="N"),
    Option("timeout_s", "time limit of one suite run against one mutant", default=5.0, type=float, metavar="S"),
    Option("max_examples", "hypothesis examples per property test", default=100, type=int, metavar="N"),
    Option("cache", "reuse cached audits", default=True, type=boolean, metavar="BOOL"),
    Option("mutation", "run mutmut (false: only the edge-case check)", default=True, type=boolean, metavar="BOOL"),
)


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry: audit a task set, print the table, write the reports; exit 1 if an audit or a `when` failed."""
    from runner.kinds.registry import self_contained
    from runner.tasks import load_task_set
    from runner.validation import typed_config

    started = time.monotonic()
    argv = sys.argv[1:] if argv is None else list(argv)
    opts, overrides = parse_args(argv, OPTIONS, "runner.audit", strength_audit.__doc__)
    cfg = typed_config(compose_config(overrides))
    options = AuditOptions(
        threshold=opts["threshold"],
        workers=opts["workers"],
        timeout_s=opts["timeout_s"],
        max_examples=opts["max_examples"],
        cache_dir=str(cfg.cache_dir),
        use_cache=opts["cache"],
        mutation=opts["mutation"],
    )
    tasks = self_contained(load_task_set(cfg.task_set, cfg.cache_dir))  # repo tasks: no suites of their own
    name = str(cfg.task_set.name)
    what = f"mutmut {mutants.mutmut_version()}" if options.mutation else "the edge-case check only (mutation=false)"
    print(f"auditing {len(tasks)} tasks of {name} with {what} ({options.workers} workers)")

    def progress(a: TaskAudit) -> None:
        state = "cached" if a.cached else f"{a.seconds:.0f}s"
        result = f"{_pct(a.score)} ({state})" if options.mutation else f"edge cases exercised {_edge_cell(a)}"
        print(f"  {a.task_id}: {result}" + (f" ERROR {a.error}" if a.error else ""), flush=True)

    audits = audit_tasks(tasks, options, progress)
    seconds = time.monotonic() - started
    print(format_table(audits))
    for a in audits:
        for s in a.surviving:
            print(f"\n# {a.task_id}: surviving {s['mutant']}\n{s['diff']}")
    print("\n" + "\n".join(edge_case_lines(audits)))
    report = Path(opts["out"]) if "out" in opts else None
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(report_json(audits))
    if options.mutation:  # an edge-case-only audit has no scores: not the latest audit, not logged
        latest = write_latest(audits, name, options.cache_dir)
        report = report or latest
        print(f"\nreport: {report}")
        if cfg.tracking.enabled:
            run_id = log_to_mlflow(audits, cfg.tracking, name, options.threshold, report, seconds)
            print(f"mlflow run {run_id} in experiment {cfg.tracking.experiment}-audit")
        weak = [a.task_id for a in audits if a.weak and not a.error]
        print(f"weak tasks (score < {options.threshold:g}): {', '.join(weak) or 'none'}")
    elif report is not None:
        print(f"\nreport: {report}")
    print(f"audit took {time.monotonic() - started:.1f}s")
    return 1 if any(a.error or a.edge_case_errors for a in audits) else 0


if __name__ == "__main__":
    run(main)
