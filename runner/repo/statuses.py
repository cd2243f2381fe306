"""A repo task's verdict from what the worker observed of its test run (runner.sandbox.repo_job).

A node id passes only if its setup, call and teardown each reported `passed` and the reporter itself saw
no exception in them; the run passes only if every demanded node id passed, the reporter's final `done`
arrived, the integrity check found nothing replaced, the channel carried nothing unauthenticated and no
process outlived the run. Exit codes, printed summaries and report files are never looked at, so
`os._exit(0)`, `sys.exit`, forged output or a junit file cannot make a pass; zero tests is never a pass.
"""

from __future__ import annotations

import os
import signal

from runner.outcome import Outcome, SuiteResult, TestResult, Verdict
from runner.sandbox.repo_job import RepoRunResult
from runner.tasks.repo_task import RepoTask

_PHASES = ("setup", "call", "teardown")


def _kind(messages: list[dict], kind: str) -> list[dict]:
    return [m for m in messages if m.get("k") == kind]


def test_statuses(task: RepoTask, run: RepoRunResult) -> dict[str, TestResult]:
    """Each demanded node id's result: passed, failed, error, skipped, xfailed, xpassed or missing."""
    phases: dict[str, dict[str, dict]] = {}
    for report in _kind(run.messages, "report"):
        if isinstance(report.get("id"), str) and report.get("when") in _PHASES:
            phases.setdefault(report["id"], {})[report["when"]] = report
    collect = {e.get("id"): str(e.get("msg", "")) for e in _kind(run.messages, "collect_error")}
    results = {}
    for node in task.demanded:
        seen = phases.get(node, {})
        file_error = collect.get(node.split("::", 1)[0]) or collect.get("conftest")
        if not seen:
            results[node] = TestResult(node, "error" if file_error else "missing", file_error or "not run")
            continue
        status, message = "passed", ""
        for when in _PHASES:
            report = seen.get(when)
            if report is None:
                status, message = "error", f"no {when} report"
                break
            ok = report.get("outcome") == "passed" and report.get("raised") is False and not report.get("xfail")
            if not ok:
                outcome = str(report.get("outcome"))
                if report.get("xfail"):
                    status = "xpassed" if outcome == "passed" else "xfailed"
                elif outcome == "passed":
                    status = "error"  # pytest says passed, but the reporter saw it raise
                else:
                    status = "failed" if when == "call" and outcome == "failed" else outcome
                    status = "error" if when != "call" and outcome == "failed" else status
                message = str(report.get("msg", ""))
                break
        results[node] = TestResult(node, status, message)
    return results


def _run_problem(run: RepoRunResult) -> tuple[Outcome, str] | None:
    """What makes the whole run untrustworthy or unfinished, or None."""
    if run.harness_error:
        return Outcome.HARNESS_ERROR, run.harness_error
    tamper = [str(t.get("why")) for t in _kind(run.messages, "tamper")]
    done = _kind(run.messages, "done")
    if done:
        tamper += [str(t) for t in done[-1].get("tamper", []) if isinstance(done[-1].get("tamper"), list)]
    if run.violations or tamper:
        return Outcome.ERROR, "tampering: " + "; ".join([*run.violations, *tamper][:3])
    if run.leftovers:
        return Outcome.ERROR, "processes outlived the test run"
    if run.timed_out or (os.WIFSIGNALED(run.status or 0) and os.WTERMSIG(run.status) == signal.SIGXCPU):
        return Outcome.TIMEOUT, "the test run exceeded its time limit"
    if run.output_exceeded:
        return Outcome.RESOURCE_EXCEEDED, "the test run's output exceeded the cap"
    if os.WIFSIGNALED(run.status or 0) and os.WTERMSIG(run.status) == signal.SIGXFSZ:
        return Outcome.RESOURCE_EXCEEDED, "a file exceeded the size limit"
    if len(done) != 1:
        code = os.waitstatus_to_exitcode(run.status) if run.status is not None else "unknown"
        return Outcome.ERROR, f"the test run ended without its final report (exit code {code})"
    return None


def _suite(name: str, nodes: tuple[str, ...], tests: dict[str, TestResult], detail: str) -> SuiteResult:
    results = tuple(tests[n] for n in nodes)
    if results and all(t.status == "passed" for t in results):
        return SuiteResult(name, Outcome.PASSED, results)
    outcome = Outcome.FAILED if any(t.status == "failed" for t in results) else Outcome.ERROR
    return SuiteResult(name, outcome, results, detail)


def repo_verdict(task: RepoTask, run: RepoRunResult) -> Verdict:
    """The verdict of one run: suites `visible` (the task's visible_tests) and `hidden` (the rest)."""
    tests = test_statuses(task, run)
    problem = _run_problem(run)
    suites = {}
    for name, nodes in task.suites.items():
        if nodes:
            suite = _suite(name, nodes, tests, problem[1] if problem else "")
            if problem is not None:
                suite = SuiteResult(name, problem[0], suite.tests, problem[1])
            suites[name] = suite
    if problem is not None:
        outcome, detail = problem
    elif all(t.status == "passed" for t in tests.values()) and tests:
        outcome, detail = Outcome.PASSED, ""
    else:
        outcome = Outcome.FAILED if any(t.status == "failed" for t in tests.values()) else Outcome.ERROR
        bad = [f"{t.name} {t.status}" for t in tests.values() if t.status != "passed"]
        detail = f"{len(bad)} of {len(tests)} test(s) did not pass: " + ", ".join(bad[:5])
    return Verdict(outcome, suites, detail, isolation=dict(run.isolation), duration_s=run.duration_s)
