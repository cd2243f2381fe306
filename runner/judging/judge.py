"""The judge: one candidate's code -> one Verdict (syntax, signature, gate, then the sandboxed suites).

A run that timed out is run once more, and the second run's verdict counts (as EvalPlus re-checks).

Also `feedback_for_repair`, the only text about a verdict that may reach a model: it is built from the
visible suite and the syntax / gate / signature messages alone, never from hidden or property suites.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.config import GateConfig
from runner.judging.gate import check_gate, gate_violations, reports_only
from runner.judging.signature import check_signature
from runner.judging.suite_module import build_suite_module, needs_reference, suite_file_name
from runner.outcome import STARVED_RERUNS, Outcome, SuiteResult, Verdict
from runner.suites.shipped import guard_source
from runner.syntax_tree import parse_tree
from runner.tasks.model import SUITES, Task

if TYPE_CHECKING:
    from runner.sandbox.workers.pool import SandboxJob, WorkerPool

SEVERITY = (Outcome.HARNESS_ERROR, Outcome.RESOURCE_EXCEEDED, Outcome.TIMEOUT, Outcome.ERROR, Outcome.FAILED)
"""Per-suite outcomes, most severe first: the overall outcome of a run that did not pass."""

_DETAIL_TESTS = 3
_MESSAGE_CHARS = 300


def build_job(task: Task, code: str, suites: tuple[str, ...] = SUITES) -> SandboxJob:
    """The sandbox job running `code` as the candidate against the task's requested suites."""
    from runner.sandbox.workers.pool import SandboxJob

    files = {**task.files, "candidate.py": code, "candidate_guard.py": guard_source()}
    if needs_reference(task, suites):  # else a candidate could import the reference and return its answers
        files["reference.py"] = task.reference
    order = []
    for suite in suites:
        if suite in task.suites:
            name = suite_file_name(suite)
            files[name] = build_suite_module(task, suite)
            order.append((suite, name))
    return SandboxJob(files=files, suites=tuple(order), time_limit_s=task.time_limit_s, cpu_limit_s=task.cpu_limit_s)


def _clip(text: str, limit: int = _MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _suite_text(result: SuiteResult) -> str:
    head = f"{result.suite}: {result.outcome.value}"
    if result.detail and result.outcome is not Outcome.FAILED:  # a FAILED detail only lists the tests
        head += f" ({_clip(result.detail)})"
    failing = result.failing()
    shown = [f"{t.name} {t.status}" + (f": {_clip(t.message)}" if t.message else "") for t in failing]
    more = len(failing) - _DETAIL_TESTS
    return "; ".join([head, *shown[:_DETAIL_TESTS]] + ([f"... and {more} more"] if more > 0 else []))


def overall_outcome(results: dict[str, SuiteResult], expected: tuple[str, ...]) -> Outcome:
    """PASSED only if every expected suite ran and passed; else the most severe suite outcome."""
    if not expected or any(name not in results for name in expected):
        return Outcome.HARNESS_ERROR
    outcomes = {results[name].outcome for name in expected}
    if outcomes == {Outcome.PASSED}:
        return Outcome.PASSED
    for outcome in SEVERITY:
        if outcome in outcomes:
            return outcome
    return Outcome.HARNESS_ERROR  # an outcome a sandbox should never report for a suite


def precheck(task: Task, code: str | None, gate: GateConfig) -> Verdict | None:
    """The verdict found before running anything (no code, syntax, signature, gate), or None.

    In report mode the gate decides nothing here: `judge` records its violations beside the outcome.
    """
    if code is None or not code.strip():
        return Verdict(Outcome.NO_CODE, detail="no code found in the response")
    try:
        parse_tree(code)
    except SyntaxError as err:
        return Verdict(Outcome.SYNTAX_ERROR, detail=f"line {err.lineno}: {err.msg}", line=err.lineno)
    except ValueError as err:  # e.g. null bytes
        return Verdict(Outcome.SYNTAX_ERROR, detail=str(err))
    entry_points = (task.entry_point, *task.extra_entry_points)
    # The signature comes first: a misnamed function is a signature mismatch, not a policy violation.
    for name in entry_points:
        signature = task.signature if name == task.entry_point else ""
        problem = check_signature(code, name, signature, task.reference)
        if problem is not None:
            return Verdict(Outcome.SIGNATURE_MISMATCH, detail=problem)
    violation = None if reports_only(gate) else check_gate(code, gate, entry_points)
    if violation is not None:
        return Verdict(Outcome.POLICY_REJECTED, detail=str(violation), rule=violation.rule, line=violation.line)
    return None


def judge(
    task: Task, code: str | None, pool: WorkerPool, gate: GateConfig, suites: tuple[str, ...] = SUITES
) -> Verdict:
    """Judge one candidate: static checks first, then every requested suite the task has, sandboxed."""
    early = precheck(task, code, gate)
    if early is not None:
        return early
    job = build_job(task, code, suites)
    expected = tuple(name for name, _ in job.suites)
    result = pool.run(job)
    outcome = overall_outcome(result.suites, expected)
    for _ in range(STARVED_RERUNS):
        # Run again before it counts, but only a suite that waited for a CPU: one that used its whole
        # CPU time (a loop, an exponential algorithm) would use it again.
        if outcome is not Outcome.TIMEOUT or not any(r.starved for r in result.suites.values()):
            break
        result = pool.run(job)
        outcome = overall_outcome(result.suites, expected)
    ran = {name: result.suites[name] for name in expected if name in result.suites}
    if outcome is Outcome.PASSED:
        detail = ""
    elif not expected:
        detail = "the task has none of the requested suites: " + ", ".join(suites)
    elif len(ran) < len(expected):
        detail = "the sandbox reported no result for: " + ", ".join(n for n in expected if n not in ran)
    else:
        detail = "\n".join(_suite_text(r) for r in ran.values() if not r.passed)
    isolation = dict(result.isolation or getattr(pool, "isolation", {}) or {})
    violations = reported_violations(task, code, gate)
    return Verdict(outcome, ran, detail, isolation=isolation, duration_s=result.duration_s, violations=violations)


def reported_violations(task: Task, code: str, gate: GateConfig) -> tuple[dict, ...]:
    """In report mode, every gate violation of (parsing) `code` as {rule, line, message}; else ()."""
    if not reports_only(gate):
        return ()
    entry_points = (task.entry_point, *task.extra_entry_points)
    return tuple(
        {"rule": v.rule, "line": v.line, "message": v.message} for v in gate_violations(code, gate, entry_points)
    )


def feedback_for_repair(verdict: Verdict, max_chars: int = 2000) -> str:
    """What a repair prompt may show: static-check messages or the visible suite's results only."""
    if verdict.outcome in (Outcome.NO_CODE, Outcome.SYNTAX_ERROR, Outcome.POLICY_REJECTED,
                           Outcome.SIGNATURE_MISMATCH, Outcome.PATCH_FAILED, Outcome.PATCH_FORBIDDEN):  # fmt: skip
        text = f"{verdict.outcome.value}: {verdict.detail}"
    else:
        visible = verdict.suites.get("visible")
        if visible is None:
            text = "The solution was not accepted. No visible tests are available for this task."
        elif visible.passed:  # the loop never repairs then (see repair_allowed); said for completeness
            text = "All visible tests passed."
        else:
            lines = [f"Visible tests: {visible.outcome.value}."]
            for test in visible.failing():
                lines.append(f"- {test.name} {test.status}" + (f": {_clip(test.message)}" if test.message else ""))
            if not visible.failing() and visible.detail:
                lines.append(_clip(visible.detail))
            text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


def repair_allowed(verdict: Verdict) -> bool:
    """Whether a repair may follow: only when the checks the model may see (static, visible) failed.

    Repairing after visible tests pass would tell the model that hidden tests failed, so it is not done.
    """
    if verdict.passed or not verdict.outcome.scored:
        return False
    if not verdict.suites:  # a static check failed: no code, syntax, signature or gate
        return True
    visible = verdict.suites.get("visible")
    return visible is not None and not visible.passed
