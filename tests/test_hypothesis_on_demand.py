"""Hypothesis is in scope of the suites that use it, and a worker loads it before the first job that does."""

import pytest

from runner.judging.suite_module import build_suite_module, suite_file_name, uses_hypothesis
from runner.outcome import Outcome
from runner.sandbox.workers.pool import Limits, SandboxJob, WorkerPool
from runner.tasks.model import Task

TASK = Task(
    id="twice",
    entry_point="twice",
    prompt="Double a number.",
    reference="def twice(x):\n    return 2 * x\n",
    suites={
        # (the name split in two: a job whose text names hypothesis gets it loaded)
        "visible": "import sys\n\ndef test_plain():\n    assert twice(2) == 4 and 'hypo' 'thesis' not in sys.modules\n",
        "properties": "@given(st.integers())\ndef test_matches(x):\n    assert twice(x) == reference.twice(x)\n",
    },
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("def test_a():\n    assert f(1) == 2\n", False),
        ("def test_a():\n    assert 'given' in 'a given string'\n", False),
        ("@given(st.integers())\ndef test_a(x):\n    assert f(x)\n", True),
        ("def test_a():\n    settings(max_examples=3)\n", True),
        ("import hypothesis.strategies as hs\n", True),
        ("from hypothesis.extra import numpy\n", True),
        ("@given(st.integers())\ndef test_a(:\n", True),  # does not parse: its names stay in scope for the report
        ("def test_a(:\n", False),
    ],
)
def test_a_suite_uses_hypothesis_when_it_names_it(body, expected):
    assert uses_hypothesis(body) is expected


def test_only_a_suite_that_uses_hypothesis_imports_it():
    assert "hypothesis" not in build_suite_module(TASK, "visible")
    assert "from hypothesis import assume, example, given, settings" in build_suite_module(TASK, "properties")


def job(code: str, *suites: str) -> SandboxJob:
    files = {"candidate.py": code, "reference.py": TASK.reference}
    files.update({suite_file_name(s): build_suite_module(TASK, s) for s in suites})
    return SandboxJob(files, tuple((s, suite_file_name(s)) for s in suites))


def test_a_worker_loads_hypothesis_for_the_first_job_that_needs_it():
    right, wrong = "def twice(x):\n    return 2 * x\n", "def twice(x):\n    return 2 * x if x < 100 else 0\n"
    with WorkerPool(workers=1, limits=Limits(timeout_s=20, cpu_s=20, hypothesis_examples=50)) as pool:
        assert pool.run(job(right, "visible")).suites["visible"].passed  # no hypothesis in the child
        properties = pool.run(job(wrong, "properties")).suites["properties"]
        assert properties.outcome is Outcome.FAILED, properties
        assert "Falsifying example: test_matches(x=100)" in properties.tests[0].message  # shrunk
        assert pool.run(job(right, "properties")).suites["properties"].passed
        again = pool.run(job(right, "visible")).suites["visible"]  # the worker has it loaded now
        assert again.outcome is Outcome.FAILED and "'hypothesis' not in" in again.tests[0].message
