"""The judge over every outcome class, and repair feedback that never leaks hidden material."""

import dataclasses

import pytest

from runner.config import GateConfig
from runner.judging.judge import SEVERITY, build_job, feedback_for_repair, judge, overall_outcome
from runner.outcome import STARVED_RERUNS, Outcome, SuiteResult, Verdict
from runner.outcome import TestResult as Result
from runner.tasks.model import Task
from tests.cpu_load import every_core_busy

MARKER = "ZQXMARKER"
REFERENCE = "def double(x):\n    return 2 * x\n"
GOOD = "def double(x):\n    return x + x\n"


def make_task(**suites: str) -> Task:
    default = {
        "visible": "def test_visible_one():\n    assert double(1) == 2\n",
        "hidden": f"def test_hidden_{MARKER}():\n    assert double(5) == 10, '{MARKER} hidden message'\n",
        "properties": (
            "@given(st.integers(-100, 100))\n"
            f"def test_props_{MARKER}(x):\n    assert double(x) == reference.double(x), '{MARKER} property'\n"
        ),
    }
    default.update(suites)
    return Task("double", "double", "Double x.", REFERENCE, default, signature="def double(x: int) -> int")


TASK = make_task()
GATE = GateConfig()


# ---- static outcomes: the pool is never touched ------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (None, Outcome.NO_CODE),
        ("  \n", Outcome.NO_CODE),
        ("def double(x):\n    return (x\n", Outcome.SYNTAX_ERROR),
        ("import os\ndef double(x):\n    return x\n", Outcome.POLICY_REJECTED),
        ("def triple(x):\n    return 3 * x\n", Outcome.SIGNATURE_MISMATCH),
        ("def double(x, y):\n    return x\n", Outcome.SIGNATURE_MISMATCH),
    ],
)
def test_static_outcomes(code, outcome):
    verdict = judge(
        TASK, code, pool=None, gate=GATE if outcome is Outcome.POLICY_REJECTED else GateConfig(enabled=False)
    )
    assert verdict.outcome is outcome and not verdict.passed and verdict.detail


def test_syntax_error_and_gate_carry_line_and_rule():
    syntax = judge(TASK, "def double(x):\n    return x +\n", None, GATE)
    assert syntax.line == 2 and syntax.detail.startswith("line 2:")
    policy = judge(TASK, "def double(x):\n    return eval('x')\n", None, GATE)
    assert (policy.rule, policy.line) == ("forbidden-call", 2)


def test_overall_outcome_takes_the_most_severe():
    assert SEVERITY[0] is Outcome.HARNESS_ERROR and SEVERITY[-1] is Outcome.FAILED
    names = ("visible", "hidden", "properties")
    for worse_index, worse in enumerate(SEVERITY):
        for milder in SEVERITY[worse_index:]:
            results = {
                "visible": SuiteResult("visible", Outcome.PASSED),
                "hidden": SuiteResult("hidden", milder),
                "properties": SuiteResult("properties", worse),
            }
            assert overall_outcome(results, names) is worse
    passed = {n: SuiteResult(n, Outcome.PASSED) for n in names}
    assert overall_outcome(passed, names) is Outcome.PASSED
    assert overall_outcome({"visible": passed["visible"]}, names) is Outcome.HARNESS_ERROR  # one missing
    assert overall_outcome({}, ()) is Outcome.HARNESS_ERROR  # nothing ran is never a pass


def test_job_has_every_file_the_suites_import():
    pytest.importorskip("runner.sandbox.workers.pool")
    job = build_job(TASK, GOOD, ("hidden", "visible", "nonexistent"))
    assert job.suites == (("hidden", "test_hidden.py"), ("visible", "test_visible.py"))
    assert {"candidate.py", "candidate_guard.py", "test_hidden.py", "test_visible.py"} <= set(job.files)
    assert job.files["candidate.py"] == GOOD
    assert (  # no suite of TASK names `reference`: the job holds none for the candidate to import
        "reference.py" not in job.files and "import reference" not in job.files["test_visible.py"]
    )  # no suite names it


def test_a_job_whose_suite_names_the_reference_carries_it():
    differential = {**TASK.suites, "properties": "def test_same():\n    assert reference.double(2) == double(2)\n"}
    job = build_job(dataclasses.replace(TASK, suites=differential), GOOD, ("visible", "properties"))
    assert job.files["reference.py"] == REFERENCE and "import reference\n" in job.files["test_properties.py"]
    assert "import reference" not in job.files["test_visible.py"]


# ---- feedback ------------------------------------------------------------------------------------------


def planted_verdict(visible_outcome: Outcome) -> Verdict:
    visible_tests = (Result("test_visible_one", "failed", "assert 3 == 2"),)
    if visible_outcome is Outcome.PASSED:
        visible_tests = (Result("test_visible_one", "passed"),)
    suites = {
        "visible": SuiteResult("visible", visible_outcome, visible_tests),
        "hidden": SuiteResult(
            "hidden", Outcome.FAILED, (Result(f"test_{MARKER}", "failed", f"{MARKER} msg"),), f"{MARKER} det"
        ),
        "properties": SuiteResult("properties", Outcome.ERROR, (Result(f"test_p_{MARKER}", "error", MARKER),), MARKER),
    }
    return Verdict(Outcome.ERROR, suites=suites, detail=f"hidden: test_{MARKER} failed: {MARKER} msg")


def test_feedback_shows_visible_failures_only():
    text = feedback_for_repair(planted_verdict(Outcome.FAILED))
    assert "test_visible_one" in text and "assert 3 == 2" in text
    assert MARKER not in text
    assert "hidden" not in text and "propert" not in text and "1 more" not in text


def test_feedback_when_visible_passed_reveals_nothing_else():
    text = feedback_for_repair(planted_verdict(Outcome.PASSED))
    assert MARKER not in text and "passed" in text


def test_feedback_for_static_outcomes_is_the_message():
    verdict = judge(TASK, "import os\ndef double(x):\n    return x\n", None, GATE)
    assert "rule no-import at line 1" in feedback_for_repair(verdict)
    assert len(feedback_for_repair(verdict, max_chars=20)) == 20


# ---- the real sandbox ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool():
    sandbox = pytest.importorskip("runner.sandbox.workers.pool")
    limits = sandbox.Limits(timeout_s=3.0, cpu_s=3.0, memory_mb=256, hypothesis_examples=20)
    with sandbox.WorkerPool(workers=2, limits=limits) as running:
        yield running


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (GOOD, Outcome.PASSED),
        ("def double(x):\n    return 2 * x if x != 5 else 11\n", Outcome.FAILED),
        ("def double(x):\n    return [][x]\n", Outcome.ERROR),
        ("def double(x):\n    while True:\n        pass\n", Outcome.TIMEOUT),
        ("def double(x):\n    b = bytearray(2 * 1024 * 1024 * 1024)\n    return 2 * x\n", Outcome.RESOURCE_EXCEEDED),
        ("def double(x):\n    print('y' * 10_000_000)\n    return 2 * x\n", Outcome.RESOURCE_EXCEEDED),
    ],
    ids=["passed", "failed", "error", "timeout", "memory", "output"],
)
def test_sandbox_outcomes(pool, code, outcome):
    verdict = judge(TASK, code, pool, GATE)
    assert verdict.outcome is outcome, verdict.detail
    assert set(verdict.suites) == {"visible", "hidden", "properties"}
    assert verdict.isolation
    if outcome is not Outcome.PASSED:
        assert verdict.detail and not verdict.passed


class CountingPool:
    """The real pool, counting the jobs it is given."""

    def __init__(self, pool) -> None:
        self.pool, self.runs = pool, 0

    def run(self, job):
        self.runs += 1
        return self.pool.run(job)


def test_a_sleeper_that_ran_out_of_wall_clock_is_judged_once(pool):
    counting = CountingPool(pool)
    sleeper = "import time\ndef double(x):\n    time.sleep(60)\n"
    verdict = judge(TASK, sleeper, counting, GateConfig(enabled=False), suites=("hidden",))
    assert verdict.outcome is Outcome.TIMEOUT and "wall clock)" in verdict.detail, verdict.detail
    assert counting.runs == 1  # it did not wait for a CPU: another run would sleep as long


def test_a_timeout_after_waiting_for_a_cpu_is_run_again(pool):
    counting = CountingPool(pool)
    busy = "def double(x):\n    sum(range(40_000_000))\n    return 2 * x\n"  # ~1 s of CPU per call
    with every_core_busy():
        verdict = judge(TASK, busy, counting, GATE, suites=("hidden",))
    assert verdict.outcome is Outcome.TIMEOUT and "for a CPU" in verdict.detail, verdict.detail
    assert counting.runs == 1 + STARVED_RERUNS  # starved every time: run until the re-runs are used up


def test_failed_detail_names_the_failing_test(pool):
    verdict = judge(TASK, "def double(x):\n    return 2 * x if x != 5 else 11\n", pool, GATE)
    assert verdict.suite_passed() == {"visible": True, "hidden": False, "properties": True}
    assert f"test_hidden_{MARKER}" in verdict.detail


def test_forged_equality_object_cannot_pass(pool):
    code = "def double(x):\n    return Always()\n\nclass Always:\n    def __eq__(self, other):\n        return True\n"
    verdict = judge(TASK, code, pool, GateConfig(enabled=False))
    assert not verdict.passed


def test_missing_test_only_module_is_a_harness_error(pool):
    task = make_task(hidden="import yaml_not_installed_zz\n\ndef test_h():\n    assert double(2) == 4\n")
    verdict = judge(task, GOOD, pool, GATE)
    assert verdict.outcome is Outcome.HARNESS_ERROR and not verdict.outcome.scored
    assert "yaml_not_installed_zz" in verdict.detail


def test_only_requested_suites_run(pool):
    verdict = judge(TASK, GOOD, pool, GATE, suites=("visible",))
    assert verdict.passed and set(verdict.suites) == {"visible"}


def test_real_feedback_never_contains_hidden_or_property_material(pool):
    wrong_everywhere = "def double(x):\n    return 2 * x + (x == 1) + (x == 5) + (x > 50)\n"
    verdict = judge(TASK, wrong_everywhere, pool, GATE)
    assert verdict.suite_passed() == {"visible": False, "hidden": False, "properties": False}
    assert MARKER in verdict.detail  # the material exists in the verdict ...
    text = feedback_for_repair(verdict)
    assert "test_visible_one" in text and MARKER not in text  # ... and never reaches the feedback
    hidden_only = judge(TASK, "def double(x):\n    return 2 * x + (x == 5)\n", pool, GATE)
    assert hidden_only.suite_passed()["visible"] and not hidden_only.passed
    assert MARKER not in feedback_for_repair(hidden_only)
