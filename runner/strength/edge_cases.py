"""Which of a task's declared edge cases (Task.edge_cases) its suites exercise.

The suites run once, all together, against the task's reference under plain pytest in a scratch
directory laid out as for the mutation audit (runner.strength.mutants.write_workspace). The
candidate module is the reference with its entry point wrapped by a recorder: before each call a
test makes (not the reference's calls to itself), the recorder evaluates every declared case's
`when` expression with the call's arguments bound to the entry point's parameter names (and the
modules the suites have in scope, plus `unicodedata`, by name), and logs
the first call of each suite that satisfies it. A declared case that no call of any suite satisfied
is "not exercised". Calls of `reference.<entry point>` (differential properties) are not recorded:
they are the oracle's inputs, never the candidate's. A `when` that raises is an error of the
declaration, reported with the exception, never counted as a match; a `when` must not change the
arguments it reads (it sees the objects the test passes, before the call).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from runner.judging.suite_module import suite_file_name
from runner.strength.mutants import HYPOTHESIS_PLUGIN, write_workspace
from runner.tasks.model import SUITES, Task

LOG_NAME = "edge_cases.jsonl"

_RECORDER = """

def _record_edge_cases(function, cases, log_path):
    import collections, copy, functools, inspect, itertools, json, math, os, re, string, sys, unicodedata

    modules = {m.__name__: m for m in (collections, copy, functools, itertools, math, re, string, sys, unicodedata)}
    signature = inspect.signature(function)
    compiled = [(name, compile(when, f"<edge case {name!r}>", "eval")) for name, when in cases]
    logged = set()
    depth = [0]

    def log(entry):
        with open(log_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\\n")

    def check(args, kwargs):
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[0]
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return  # a call that does not fit the signature: the call itself raises
        bound.apply_defaults()
        for name, code in compiled:
            if (name, test) in logged:
                continue
            try:
                matched = eval(code, {**modules, **bound.arguments})
            except Exception as exc:
                logged.add((name, test))
                log({"case": name, "file": test, "error": f"{type(exc).__name__}: {exc}"})
                continue
            if matched:
                logged.add((name, test))
                log({"case": name, "file": test})

    @functools.wraps(function)
    def recorded(*args, **kwargs):
        if depth[0] == 0:
            check(args, kwargs)
        depth[0] += 1
        try:
            return function(*args, **kwargs)
        finally:
            depth[0] -= 1

    return recorded
"""


class EdgeCaseRunError(RuntimeError):
    """The suites could not be run to record the calls (collection error, timeout, ...)."""


@dataclass(frozen=True)
class EdgeCaseCoverage:
    """Per declared case (in declaration order), the suites that exercised it; and the cases whose `when` raised."""

    exercised_by: dict[str, list[str]]
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def missed(self) -> list[str]:
        """Declared cases that no test of any suite exercised."""
        return [name for name, suites in self.exercised_by.items() if not suites]


def recorder_source(task: Task, log_path: Path) -> str:
    """The reference with its entry point wrapped by the call recorder (see the module docstring)."""
    cases = [(case.name, case.when) for case in task.edge_cases]
    entry = task.entry_point
    return f"{task.reference}{_RECORDER}\n\n{entry} = _record_edge_cases({entry}, {cases!r}, {str(log_path)!r})\n"


def read_log(task: Task, log_path: Path) -> EdgeCaseCoverage:
    """Fold the recorder's log into the coverage of every declared case."""
    suite_of = {suite_file_name(suite): suite for suite in SUITES}
    exercised: dict[str, set[str]] = {case.name: set() for case in task.edge_cases}
    errors: dict[str, str] = {}
    lines = log_path.read_text(encoding="utf-8").splitlines() if log_path.exists() else []
    for entry in map(json.loads, lines):
        suite = suite_of.get(entry["file"], entry["file"] or "outside a test")
        if "error" in entry:
            errors.setdefault(entry["case"], f"{suite}: {entry['error']}")
        else:
            exercised[entry["case"]].add(suite)
    order = {suite: index for index, suite in enumerate(SUITES)}
    by_case = {name: sorted(suites, key=lambda s: order.get(s, len(order))) for name, suites in exercised.items()}
    return EdgeCaseCoverage(by_case, errors)


def edge_case_coverage(
    task: Task, max_examples: int = 100, timeout_s: float = 600.0, workdir: Path | None = None
) -> EdgeCaseCoverage:
    """Run every suite of `task` once against its recorded reference; which declared cases were exercised.

    The run happens in `workdir`, or in a scratch directory removed afterwards; none for a task with no cases.
    """
    if not task.edge_cases:
        return EdgeCaseCoverage({})
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="runner-edge-cases-") as tmp:
            return edge_case_coverage(task, max_examples, timeout_s, Path(tmp))
    log_path = workdir / LOG_NAME
    files = write_workspace(task, workdir, recorder_source(task, log_path), max_examples)
    (workdir / "pytest.ini").write_text("[pytest]\n")  # keeps pytest from reading configuration above workdir
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", HYPOTHESIS_PLUGIN]
    command += [f"--basetemp={workdir / 'pytest-tmp'}", *files]
    try:
        proc = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise EdgeCaseRunError(f"task {task.id!r}: the suites ran past {timeout_s:g}s") from None
    if proc.returncode not in (0, 1):  # 1: some test failed, which the gold check reports; the calls still count
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        raise EdgeCaseRunError(f"task {task.id!r}: pytest could not run the suites (exit {proc.returncode}):\n{tail}")
    return read_log(task, log_path)
