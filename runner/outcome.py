"""The outcome taxonomy: exactly one outcome per attempt, with per-suite and per-test detail."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Outcome(StrEnum):
    """What happened to one attempt. Mutually exclusive; see README "What a verdict means"."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    RESOURCE_EXCEEDED = "resource_exceeded"
    NO_CODE = "no_code"
    SYNTAX_ERROR = "syntax_error"
    POLICY_REJECTED = "policy_rejected"
    SIGNATURE_MISMATCH = "signature_mismatch"
    PATCH_FAILED = "patch_failed"
    """Repo tasks: no diff in the answer, or it does not apply (`git apply`), or it changes nothing."""
    PATCH_FORBIDDEN = "patch_forbidden"
    """Repo tasks: the answer changes a protected path (tests), a conftest.py or pytest configuration."""
    BACKEND_ERROR = "backend_error"
    HARNESS_ERROR = "harness_error"

    @property
    def scored(self) -> bool:
        """False for failures of our side (model server, harness): never counted against a model."""
        return self not in (Outcome.BACKEND_ERROR, Outcome.HARNESS_ERROR)


@dataclass(frozen=True)
class TestResult:
    """One pytest test. `status` is passed, failed, error, skipped, xfailed, xpassed or missing."""

    __test__ = False  # not a pytest test class

    name: str
    status: str
    message: str = ""


STARVED_SHARE = 0.1
"""A run whose wall clock ran out after waiting at least this share of its limit for a CPU (a loaded machine)
is run again (up to STARVED_RERUNS times, while it stays starved) before its timeout counts; one that used
its CPU time, or slept, is not. Waiting counts the run queue and, where a run never slept, any wall time its
CPU time does not account for (a hypervisor's steal)."""
STARVED_RERUNS = 3
"""How many more runs a starved timeout gets: a sandboxed candidate runs at a low priority (nice 10), so on a
machine busy for a while (a CI run) one re-run can be starved as well."""
CPU_WAIT_MARKER = "; waited for a CPU: "
"""How a plus input's timeout message says it was starved (runner.tasks.plus_suites writes it)."""


@dataclass(frozen=True)
class SuiteResult:
    """One suite's result. `passed` is true only if every expected test ran and passed."""

    suite: str
    outcome: Outcome
    tests: tuple[TestResult, ...] = ()
    detail: str = ""
    starved: bool = False
    """A timeout whose wall clock ran out while the suite waited for a CPU: not the candidate's own slowness."""

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    def failing(self) -> tuple[TestResult, ...]:
        return tuple(t for t in self.tests if t.status != "passed")


@dataclass(frozen=True)
class Verdict:
    """The judged result of one candidate: its outcome plus everything needed to explain it.

    `rule` and `line` are set for policy rejections and syntax errors; `isolation` records which
    sandbox protections were actually in force for the run. `violations` lists the gate's findings
    (`rule`, `line`, `message`) when the gate only reports them (gate.mode=report): the outcome is then
    the functional one, and the candidate is policy-compliant only if the list is empty.
    """

    outcome: Outcome
    suites: dict[str, SuiteResult] = field(default_factory=dict)
    detail: str = ""
    rule: str | None = None
    line: int | None = None
    isolation: dict[str, bool] = field(default_factory=dict)
    duration_s: float = 0.0
    violations: tuple[dict, ...] = ()

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASSED

    @property
    def compliant(self) -> bool:
        """Passed, and broke no gate rule (in enforce mode a violation already fails the attempt)."""
        return self.passed and not self.violations

    def suite_passed(self) -> dict[str, bool]:
        return {name: s.passed for name, s in self.suites.items()}


def verdict_to_dict(verdict: Verdict) -> dict:
    """JSON-able form of a verdict (for the cache and records)."""
    return {
        "outcome": verdict.outcome.value,
        "suites": {
            name: {
                "outcome": s.outcome.value,
                "detail": s.detail,
                "tests": [[t.name, t.status, t.message] for t in s.tests],
            }
            for name, s in verdict.suites.items()
        },
        "detail": verdict.detail,
        "rule": verdict.rule,
        "line": verdict.line,
        "isolation": verdict.isolation,
        "duration_s": verdict.duration_s,
        "violations": list(verdict.violations),
    }


def verdict_from_dict(data: dict) -> Verdict:
    """Inverse of verdict_to_dict."""
    suites = {
        name: SuiteResult(
            suite=name,
            outcome=Outcome(s["outcome"]),
            tests=tuple(TestResult(*t) for t in s["tests"]),
            detail=s["detail"],
        )
        for name, s in data["suites"].items()
    }
    return Verdict(
        outcome=Outcome(data["outcome"]),
        suites=suites,
        detail=data["detail"],
        rule=data["rule"],
        line=data["line"],
        isolation=data["isolation"],
        duration_s=data["duration_s"],
        violations=tuple(data.get("violations", ())),
    )
