"""A failing property is reported with its shrunk falsifying example, under the runner profile."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runner.strength.mutants import write_workspace
from runner.suites.hypothesis_profile import PROFILE_SETTINGS, conftest_source, falsifying_example
from runner.tasks.model import Task

ABSVAL = Task(
    id="absval",
    entry_point="absval",
    prompt="Absolute value of x.",
    reference="def absval(x):\n    return abs(x)\n",
    suites={
        "visible": "def test_small():\n    assert absval(-2) == 2\n",
        "properties": (
            "@given(st.integers())\ndef test_matches_reference(x):\n    assert absval(x) == reference.absval(x)\n"
        ),
    },
)
WRONG = "def absval(x):\n    return abs(x) if x < 5 else -x\n"


def run_pytest(directory, *files: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={directory / 'tmp'}"]
    return subprocess.run([*command, *files], cwd=directory, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory) -> str:
    directory = tmp_path_factory.mktemp("wrong_absval")
    write_workspace(ABSVAL, directory, WRONG)
    proc = run_pytest(directory, "test_properties.py")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


def test_failing_property_reports_the_shrunk_example(failing_run):
    # hypothesis 6.170 says "Failing test case"; older releases said "Falsifying example".
    assert "Failing test case" in failing_run or "Falsifying example" in failing_run
    # Every x >= 5 fails; shrinking must bring the report down to the boundary, x=5.
    assert falsifying_example(failing_run).endswith("test_matches_reference(x=5)")


def test_passing_candidate_has_no_example(tmp_path):
    write_workspace(ABSVAL, tmp_path, ABSVAL.reference)
    proc = run_pytest(tmp_path, "test_properties.py", "test_visible.py")
    assert proc.returncode == 0, proc.stdout
    assert falsifying_example(proc.stdout) is None


def test_same_verdict_and_example_on_every_run(failing_run, tmp_path):
    write_workspace(ABSVAL, tmp_path, WRONG)
    again = run_pytest(tmp_path, "test_properties.py").stdout
    assert falsifying_example(again) == falsifying_example(failing_run)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("E       Failing test case: test_f(\nE           x=5,\nE       )\n", "Falsifying example: test_f(x=5)"),
        ("Falsifying example: test_f(\n    xs=[1, 2],\n    n=0,\n)\n", "Falsifying example: test_f(xs=[1, 2], n=0)"),
        ("Falsifying example: test_f(x=0)\n", "Falsifying example: test_f(x=0)"),
        (
            "E   Failing test case: test_f(\nE       p=P(\nE           a=1,\nE       ),\nE   )\n",
            "Falsifying example: test_f(p=P(a=1))",
        ),
        (
            "Falsifying example: test_f(\n    x=0,  # or any other generated value\n)\n",
            "Falsifying example: test_f(x=0)",
        ),
        ("AssertionError: assert 1 == 2\n", None),
    ],
)
def test_falsifying_example_parses_both_wordings(text, expected):
    assert falsifying_example(text) == expected


def run_python(code: str) -> str:
    """Run `code` in a fresh interpreter (loading a profile is global state) and return its output."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


SHOW_PROFILE = """
from hypothesis import settings
s = settings.default
print(s.max_examples, s.derandomize, s.database, s.deadline, s.print_blob,
      sorted(c.name for c in s.suppress_health_check))
"""


def test_conftest_source_loads_the_same_profile():
    from_conftest = run_python(conftest_source(max_examples=7) + SHOW_PROFILE)
    from_function = run_python(
        f"from runner.suites.hypothesis_profile import register_profile\nregister_profile(7)\n{SHOW_PROFILE}"
    )
    checks = sorted(PROFILE_SETTINGS["suppress_health_check"])
    assert from_conftest == from_function == f"7 True None None False {checks}\n"


def test_register_profile_fixes_the_example_budget():
    out = run_python(
        "from hypothesis import given, strategies as st\n"
        "from runner.suites.hypothesis_profile import register_profile\n"
        "register_profile(max_examples=13)\n"
        "runs = []\n"
        "@given(st.integers())\n"
        "def prop(x):\n"
        "    runs[-1].append(x)\n"
        "for _ in range(2):\n"
        "    runs.append([])\n"
        "    prop()\n"
        "print(len(runs[0]), runs[0] == runs[1])\n"
    )
    assert out == "13 True\n"  # the budget is fixed, and derandomized: the same examples each time
