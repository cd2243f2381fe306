"""The one CLI layer: --help with options and defaults, key=value parsing, bad input in one line."""

import subprocess
import sys
from pathlib import Path

import pytest

from runner import audit, evaluate, gold
from runner.cli import Option, UsageError, boolean, parse_args

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("main", "expected"),
    [
        (evaluate.main, ["samples=FILE", "(required)", "workers=N", "(default: sandbox.workers)"]),
        (gold.main, ["out=FILE", "(default: none)", "workers=N"]),
        (audit.main, ["threshold=X", "(default: 0.9)", "cache=BOOL", "(default: True)", "timeout_s=S"]),
    ],
    ids=["evaluate", "gold", "audit"],
)
def test_every_tool_answers_help_with_its_options_and_defaults(main, expected, capsys):
    for flag in ("--help", "-h"):
        with pytest.raises(SystemExit) as done:
            main([flag])
        assert done.value.code == 0
        page = capsys.readouterr().out
        assert page.startswith("usage: python -m runner.")
        assert all(text in page for text in expected), page
        assert "Every other key=value is a Hydra override" in page


def test_options_are_typed_defaulted_and_checked():
    options = (Option("n", "count", default=3, type=int), Option("flag", "on?", type=boolean), Option("f", "file"))
    assert parse_args(["n=5", "task_set=mbpp", "flag=TRUE"], options, "t", "") == ({"n": 5, "flag": True},
                                                                                  ["task_set=mbpp"])  # fmt: skip
    assert parse_args([], options, "t", "") == ({"n": 3}, [])
    with pytest.raises(UsageError, match="'n=many': n must be a whole number"):
        parse_args(["n=many"], options, "t", "")
    with pytest.raises(UsageError, match="expected key=value arguments, got 'loose'"):
        parse_args(["loose"], options, "t", "")
    with pytest.raises(UsageError, match="missing f=..."):
        parse_args([], (Option("f", "file", required=True),), "t", "")


@pytest.mark.parametrize(
    "argv",
    [["runner.evaluate", "out=x.jsonl"], ["runner.gold", "workers=two"], ["runner.gold", "task_set=nosuchset"]],
    ids=["missing", "badtype", "badoverride"],
)
def test_bad_input_is_one_line_and_exit_1(argv):
    done = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    if "nosuchset" in argv[-1]:
        assert "Could not find 'task_set/nosuchset'" in lines[0] and "humanevalplus_mini, mbpp" in lines[0]
