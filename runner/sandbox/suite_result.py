"""Judging one suite from what the trusted side observed: the verdict channel, exit status, limits.

The expected tests come from the suite file's AST (trusted, before anything runs); a suite passes only
if every expected test reported a pass over the channel. Exit codes, output and files never decide.
"""

from __future__ import annotations

import ast
import functools
import os
import signal
from dataclasses import dataclass, field

from runner.outcome import CPU_WAIT_MARKER, STARVED_SHARE, Outcome, SuiteResult, TestResult
from runner.sandbox.confine.limits import Limits
from runner.sandbox.protocol import CollectError, Failure, Report
from runner.syntax_tree import parse_tree

INPUT_TIMEOUT = "PlusInputTimeout"
"""The exception a plus-input suite raises when the candidate is over one input's time limit."""


@dataclass
class RunFacts:
    """What the trusted side observed of one suite run: its share of the session's channel, and the limits hit."""

    reports: list[Report] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    """Node ids of the suite's tests that started, in order."""
    collect_errors: list[CollectError] = field(default_factory=list)
    tamper: list[str] = field(default_factory=list)
    """What the child's audit hook and integrity checks reported, in order of arrival."""
    internal: list[str] = field(default_factory=list)
    ends: int = 0
    """How many messages ended the run (the suite's own end, or the session's): exactly one if pytest finished."""
    load_failure: str | None = None
    """Why the candidate could not be loaded, if it could not."""
    violations: list[str] = field(default_factory=list)
    """What the trusted side itself found wrong with the channel."""
    timed_out: bool = False
    output_exceeded: bool = False
    status: int | None = None
    output: bytes = b""
    leftovers: bool = False
    cpu_exceeded: bool = False
    cpu_wait_s: float = 0.0
    """At a wall-clock timeout: how long the suite had waited for a CPU."""


# ---------------------------------------------------------------- expected tests (trusted, from the AST)


@functools.lru_cache(maxsize=64)  # a worker sees one task's suites again for each of its samples
def expected_tests(source: str) -> tuple[str, ...]:
    """Names of the tests a suite file defines: top-level `test_*` and `Test*` classes' `test_*` methods."""
    names = []
    for node in parse_tree(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and member.name.startswith("test"):
                    names.append(f"{node.name}::{member.name}")
    return tuple(names)


# ---------------------------------------------------------------- judging one suite from the channel


def _test_status(phases: dict[str, Report], timed_out: bool) -> tuple[str, str]:
    setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
    if setup is not None and setup.outcome == "failed":
        return "error", setup.msg
    if setup is not None and setup.outcome == "skipped":
        return ("xfailed" if setup.xfail else "skipped"), setup.msg
    if call is None:
        return ("timeout" if timed_out else "error"), "the run stopped during this test"
    if call.outcome == "passed":
        status, message = ("xpassed" if call.xfail else "passed"), ""
    elif call.outcome == "skipped":
        status, message = ("xfailed" if call.xfail else "skipped"), call.msg
    else:
        status, message = ("failed" if call.failure is not None and call.failure.assertion else "error"), call.msg
    if status == "passed" and (teardown is None or teardown.outcome != "passed"):
        status = "error"
        message = teardown.msg if teardown else "the run stopped before this test's teardown"
    return status, message


def _resource_cause(facts: RunFacts, failures: list[Failure], limits: Limits) -> str | None:
    if facts.output_exceeded:
        return f"output exceeded {limits.max_output_kb} KB"
    if facts.status is not None and os.WIFSIGNALED(facts.status):
        if os.WTERMSIG(facts.status) == signal.SIGXFSZ:
            return f"file size limit exceeded ({limits.max_file_mb} MB)"
    for failure in failures:
        errnos = failure.errno
        if "MemoryError" in failure.exc:
            return f"memory limit exceeded ({limits.memory_mb} MB above baseline)"
        if 24 in errnos or 23 in errnos:
            return f"open files limit exceeded ({limits.max_open_files})"
        if 27 in errnos:
            return f"file size limit exceeded ({limits.max_file_mb} MB)"
        if 11 in errnos and "BlockingIOError" in failure.exc:
            return f"process limit exceeded ({limits.max_processes})"
    return None


def _exit_text(status: int | None) -> str:
    if status is None:
        return "no exit status"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.WEXITSTATUS(status)}"


def suite_result_of(suite: str, expected: tuple[str, ...], facts: RunFacts, limits: Limits) -> SuiteResult:
    """Judge one suite run from the trusted observations only (channel messages, exit status)."""
    tamper = [*facts.violations, *facts.tamper]
    phases: dict[str, dict[str, Report]] = {}
    for report in facts.reports:
        slot = phases.setdefault(report.id, {})
        if report.when in slot:
            tamper.append(f"duplicate {report.when} report for {report.id}")
        slot[report.when] = report
    if facts.ends > 1:
        tamper.append("two end-of-session messages")
    for nodeid in facts.started:
        phases.setdefault(nodeid, {})

    tests, seen = [], set()
    for nodeid, by_phase in phases.items():
        name = nodeid.split("::", 1)[1] if "::" in nodeid else nodeid
        status, message = _test_status(by_phase, facts.timed_out or facts.cpu_exceeded)
        seen.add(name.split("[", 1)[0])
        tests.append(TestResult(name, status, message))
    tests += [TestResult(name, "missing", "no result: the test did not run") for name in expected if name not in seen]
    tests_t = tuple(tests)

    def result(outcome: Outcome, detail: str) -> SuiteResult:
        return SuiteResult(suite, outcome, tests_t, detail)

    if tamper:
        return result(Outcome.ERROR, "tampering detected: " + "; ".join(dict.fromkeys(tamper))[:1000])
    # A resource failure reported before a timeout is usually its cause (a fork bomb starves the CPU).
    failing = [p.failure for by in phases.values() for p in by.values() if p.outcome != "passed" and p.failure]
    failures = [error.failure for error in facts.collect_errors] + failing
    cause = _resource_cause(facts, failures, limits)
    if cause:
        return result(Outcome.RESOURCE_EXCEEDED, cause)
    signaled = facts.status is not None and os.WIFSIGNALED(facts.status)
    slow = next((f for f in failures if INPUT_TIMEOUT in f.exc), None)
    if slow is not None:
        detail = "time limit of an input exceeded: " + slow.msg[:300]
        return SuiteResult(suite, Outcome.TIMEOUT, tests_t, detail, starved=CPU_WAIT_MARKER in slow.msg)
    if facts.cpu_exceeded:
        return result(Outcome.TIMEOUT, f"time limit exceeded ({limits.cpu_s:g} s CPU)")
    if facts.timed_out:
        # The wall clock ran out before the CPU time did: a victim of a loaded machine if it waited for a CPU.
        starved = facts.cpu_wait_s >= STARVED_SHARE * limits.timeout_s
        waited = f"; waited {facts.cpu_wait_s:.1f} s for a CPU" if starved else ""
        detail = f"time limit exceeded ({limits.timeout_s:g} s wall clock{waited})"
        return SuiteResult(suite, Outcome.TIMEOUT, tests_t, detail, starved=starved)
    if signaled and os.WTERMSIG(facts.status) == signal.SIGXCPU:
        return result(Outcome.TIMEOUT, f"time limit exceeded ({limits.cpu_s:g} s CPU)")
    for error in facts.collect_errors:
        module, in_candidate = error.failure.missing_module, error.failure.in_candidate
        if module and module != "candidate" and not module.startswith("candidate.") and not in_candidate:
            return result(Outcome.HARNESS_ERROR, f"test-only module missing: {module}")
    if facts.collect_errors:
        return result(Outcome.ERROR, "the suite could not be collected: " + facts.collect_errors[0].failure.msg)
    if facts.load_failure is not None:
        return result(Outcome.ERROR, "the candidate could not be loaded: " + facts.load_failure[:500])
    if facts.internal:
        return result(Outcome.ERROR, "pytest internal error: " + facts.internal[0][:500])
    if not facts.ends:
        return result(Outcome.ERROR, f"the run ended before pytest finished ({_exit_text(facts.status)})")
    if facts.leftovers:
        return result(Outcome.ERROR, "processes of the sandbox could not be killed")
    statuses = {t.status for t in tests_t}
    if not tests_t:
        return result(Outcome.ERROR, "no tests ran")
    if statuses == {"passed"}:
        return result(Outcome.PASSED, "")
    bad = [t for t in tests_t if t.status != "passed"]
    summary = f"{len(bad)} of {len(tests_t)} tests not passed: " + ", ".join(f"{t.name} {t.status}" for t in bad[:5])
    if statuses <= {"passed", "failed"}:
        return result(Outcome.FAILED, summary)
    return result(Outcome.ERROR, summary)
