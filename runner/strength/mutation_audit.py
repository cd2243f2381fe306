"""Mutation audit: how many deliberately broken references do a task's suites catch?

For every task, mutmut mutates the task's reference and runs each suite alone against every mutant
(see runner.strength.mutants for the layout). A mutant is killed by all suites together exactly when
some suite kills it (mutmut stops a run at the first failing test and a suite's verdict does not
depend on the other suites), so the `all` column is derived from the three per-suite runs instead
of a fourth run. A mutant that times out counts as killed, as in mutmut's own score:

    score = (killed + timeout) / mutants

A task is weak when its `all` score is below the threshold. The audit also runs the suites once
against the reference with every call recorded, and reports each of the task's declared edge cases
(the YAML field `edge_cases`) that no test exercises (see runner.strength.edge_cases); `mutation=false`
runs only that check (fast: no mutmut, nothing cached or recorded as the latest audit). Results are
cached per task under `<cache_dir>/audit/<hash>.json`, keyed by the reference, the suites, the
declared edge cases, the example budget, the time limit, the mutmut and hypothesis versions and the
audit's own code; the last audit of a task set is also written to
`<cache_dir>/audit/latest-<task_set>.json` (see `latest_audit_scores`).

    python -m runner.audit task_set=seed10 [out=FILE] [threshold=0.9] [workers=2] [timeout_s=5]
                           [max_examples=100] [cache=true] [mutation=true]
                           [any other config override, e.g. tracking=off]
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from runner.caches.content import write_atomic, write_once
from runner.caches.fingerprint import files_digest
from runner.strength import edge_cases, mutants
from runner.suites import hypothesis_profile
from runner.tasks.model import SUITES, Task

AUDIT_VERSION = "1"
"""Bump when the audit's verdict rules change (the source of its modules is hashed too)."""

COLUMNS = ("visible", "hidden", "properties", "all")


@dataclass(frozen=True)
class AuditOptions:
    """How mutants are judged: `timeout_s` seconds per mutant beyond twice its tests' clean run time."""

    threshold: float = 0.9
    workers: int = 2
    timeout_s: float = 5.0
    max_examples: int = 100
    cache_dir: str = ".cache/runner"
    use_cache: bool = True
    mutation: bool = True


@dataclass(frozen=True)
class TaskAudit:
    """One task's audit. `score` is None when the reference has no mutants or the audit failed."""

    task_id: str
    mutants: int
    killed: int
    survived: int
    timeout: int
    score: float | None
    score_by_suite: dict[str, float | None]
    weak: bool
    surviving: list[dict[str, str]] = field(default_factory=list)
    survived_by_suite: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0
    cached: bool = False
    edge_cases: dict[str, list[str]] = field(default_factory=dict)
    """Each declared edge case -> the suites whose tests exercise it (empty: no test does)."""
    edge_cases_missed: list[str] = field(default_factory=list)
    edge_case_errors: dict[str, str] = field(default_factory=dict)
    """Declared edge cases whose `when` expression raised, with the exception."""

    def to_dict(self) -> dict[str, Any]:
        """The audit as one entry of the JSON report."""
        return asdict(self)


def _score(killed: int, timeout: int, total: int) -> float | None:
    return (killed + timeout) / total if total else None


def combine(task_id: str, runs: dict[str, mutants.SuiteMutation], threshold: float) -> TaskAudit:
    """Join the per-suite mutmut runs of one task into its audit (see the module docstring)."""
    keys = {name: set(run.statuses) for name, run in runs.items()}
    names = sorted(set().union(*keys.values()), key=_mutant_order)
    if any(k != set(names) for k in keys.values()):
        raise mutants.MutationRunError(f"task {task_id!r}: suites saw different mutant sets {keys}")
    overall: dict[str, str] = {}
    for name in names:
        verdicts = {run.statuses[name] for run in runs.values()}
        overall[name] = next(s for s in ("killed", "timeout", "survived") if s in verdicts)
    counts = {s: sum(1 for v in overall.values() if v == s) for s in ("killed", "survived", "timeout")}
    score = _score(counts["killed"], counts["timeout"], len(names))
    by_suite: dict[str, float | None] = {
        suite: _score(run.count("killed"), run.count("timeout"), len(run.statuses)) for suite, run in runs.items()
    }
    by_suite["all"] = score
    diffs: dict[str, str] = {}
    for run in runs.values():
        diffs.update(run.diffs)
    surviving = [{"mutant": n, "diff": diffs.get(n, "")} for n in names if overall[n] == "survived"]
    survived_by_suite = {suite: [n for n in names if run.statuses[n] == "survived"] for suite, run in runs.items()}
    return TaskAudit(
        task_id=task_id,
        mutants=len(names),
        killed=counts["killed"],
        survived=counts["survived"],
        timeout=counts["timeout"],
        score=score,
        score_by_suite=by_suite,
        weak=score is None or score < threshold,
        surviving=surviving,
        survived_by_suite=survived_by_suite,
        seconds=sum(run.seconds for run in runs.values()),
    )


def _mutant_order(name: str) -> tuple[str, int]:
    stem, _, number = name.rpartition("__mutmut_")
    return (stem, int(number) if number.isdigit() else 0)


def _code_fingerprint() -> str:
    from runner.judging import suite_module
    from runner.suites import candidate_guard

    modules = (mutants, edge_cases, hypothesis_profile, candidate_guard, suite_module)
    return files_digest((Path(module.__file__) for module in modules), AUDIT_VERSION)


def audit_key(task: Task, options: AuditOptions) -> str:
    """Cache key: everything that determines a task's audit except the weak threshold."""
    from importlib.metadata import version

    payload = {
        "entry_points": [task.entry_point, *task.extra_entry_points],
        "reference": task.reference,
        "suites": {k: task.suites[k] for k in sorted(task.suites)},
        "max_examples": options.max_examples,
        "timeout_s": options.timeout_s,
        "mutmut": mutants.mutmut_version(),
        "hypothesis": version("hypothesis"),
        "python": platform.python_version(),
        "code": _code_fingerprint(),
    }
    if task.edge_cases:
        payload["edge_cases"] = [[case.name, case.when] for case in task.edge_cases]
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _audit_dir(options: AuditOptions) -> Path:
    return Path(options.cache_dir) / "audit"


def _load_cached(path: Path, threshold: float) -> TaskAudit | None:
    try:
        audit = TaskAudit(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):  # missing, torn or of another shape: a miss
        return None
    return replace(audit, weak=audit.score is None or audit.score < threshold, cached=True)


def _safe(task_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in task_id)


def _suite_job(task: Task, suite: str, options: AuditOptions) -> mutants.SuiteMutation:
    with tempfile.TemporaryDirectory(prefix=f"runner-audit-{_safe(task.id)}-{suite}-") as tmp:
        workdir = Path(tmp)
        run = mutants.run_suite_mutation(
            task, (suite,), workdir, max_examples=options.max_examples, timeout_s=options.timeout_s
        )
        survivors = [n for n, s in run.statuses.items() if s == "survived"]
        return replace(run, diffs=mutants.mutant_diffs(workdir, survivors))


def _with_edge_cases(audit: TaskAudit, coverage: edge_cases.EdgeCaseCoverage) -> TaskAudit:
    return replace(
        audit, edge_cases=coverage.exercised_by, edge_cases_missed=coverage.missed, edge_case_errors=coverage.errors
    )


def _unmutated(task_id: str) -> TaskAudit:
    """The audit of a task when mutmut did not run (mutation=false): no score, not weak."""
    return TaskAudit(task_id, 0, 0, 0, 0, None, {c: None for c in COLUMNS}, weak=False)


def _failed(task_id: str, error: str) -> TaskAudit:
    return replace(_unmutated(task_id), weak=True, error=error)


_RUN_ERRORS = (mutants.MutationRunError, edge_cases.EdgeCaseRunError, subprocess.SubprocessError, OSError, ValueError)


def audit_tasks(
    tasks: Sequence[Task],
    options: AuditOptions = AuditOptions(),
    progress: Callable[[TaskAudit], None] | None = None,
) -> list[TaskAudit]:
    """Audit every task, reusing cached results; returns the audits in task order.

    Each (task, suite) pair is one mutmut process in its own scratch directory with its own pytest
    `--basetemp` and `--max-children 1`; up to `options.workers` of them run at once, beside each
    task's edge-case run (one pytest process). With `options.mutation` off only the edge-case runs
    happen and nothing is cached.
    """
    cache = _audit_dir(options)
    results: dict[str, TaskAudit] = {}
    pending: list[tuple[Task, str]] = []
    for task in tasks:
        key = audit_key(task, options)
        use_cache = options.use_cache and options.mutation
        cached = _load_cached(cache / f"{key}.json", options.threshold) if use_cache else None
        if cached is not None:
            results[task.id] = cached
            if progress:
                progress(cached)
        else:
            pending.append((task, key))
    with ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        edge_runs = {t.id: pool.submit(edge_cases.edge_case_coverage, t, options.max_examples) for t, _ in pending}
        futures = {
            task.id: {suite: pool.submit(_suite_job, task, suite, options) for suite in SUITES if suite in task.suites}
            for task, _ in pending
            if options.mutation
        }
        for task, key in pending:
            try:
                if options.mutation:
                    runs = {suite: future.result() for suite, future in futures[task.id].items()}
                    audit = combine(task.id, runs, options.threshold)
                else:
                    audit = _unmutated(task.id)
                audit = _with_edge_cases(audit, edge_runs[task.id].result())
            except _RUN_ERRORS as exc:
                audit = _failed(task.id, f"{type(exc).__name__}: {exc}")
            else:
                if options.mutation:  # another audit that stored this key first wins (see runner.caches.content)
                    path = cache / f"{key}.json"
                    if not write_once(path, json.dumps(audit.to_dict(), indent=1).encode()):
                        audit = _load_cached(path, options.threshold) or audit
            results[task.id] = audit
            if progress:
                progress(audit)
    return [results[t.id] for t in tasks]


def report_json(audits: Sequence[TaskAudit]) -> str:
    """The JSON report: a list with one object per task."""
    return json.dumps([a.to_dict() for a in audits], indent=2)


def _latest_path(task_set_name: str, cache_dir: str) -> Path:
    return Path(cache_dir) / "audit" / f"latest-{task_set_name}.json"


def write_latest(audits: Sequence[TaskAudit], task_set_name: str, cache_dir: str = ".cache/runner") -> Path:
    """Record this audit as the latest one of `task_set_name`."""
    path = _latest_path(task_set_name, cache_dir)
    write_atomic(path, report_json(audits).encode())
    return path


def latest_audit_scores(task_set_name: str, cache_dir: str = ".cache/runner") -> dict[str, float]:
    """Mutation score of each task in the latest audit of a task set ({} if it was never audited).

    Tasks whose audit failed or that have no mutants are left out.
    """
    try:
        entries = json.loads(_latest_path(task_set_name, cache_dir).read_bytes())
    except (OSError, ValueError):  # never audited, or the file is unreadable
        return {}
    return {e["task_id"]: e["score"] for e in entries if e.get("score") is not None}
