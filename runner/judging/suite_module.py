"""How a task's suite text becomes a pytest module.

Every suite runs with these names in scope: the task's entry point(s), imported from the candidate
module `candidate`; the reference solution as module `reference` (for differential checks, and only in a
job where a suite names it: elsewhere the job holds no reference for a candidate to import); the
standard helpers `copy`, `math`, `itertools`, `collections`, `functools`, `re`, `string`, `sys`,
`pytest`; and hypothesis's `given`, `settings`, `assume`, `example`, `st` in a suite that names one of
them (`uses_hypothesis`; the others never import hypothesis, so the sandbox loads it only for the
jobs that need it: 0.3 s of a pool's start-up). Suite files import the candidate's
functions through `candidate_guard`, which rejects return values that are not plain built-in data
(an object whose `__eq__` always answers True cannot pass an equality assertion) and imports the
candidate only on the first call, after every suite module of the session has been collected.
"""

from __future__ import annotations

import ast
import functools
import re

from runner.syntax_tree import parse_tree
from runner.tasks.model import Task

PREAMBLE = """\
import collections
import copy
import functools
import itertools
import math
import re
import string
import sys

import pytest
{hypothesis}{reference}
from candidate_guard import load_entry_points as _load_entry_points
"""
HYPOTHESIS_IMPORTS = """from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
"""
HYPOTHESIS_NAMES = frozenset({"assume", "example", "given", "settings", "st", "hypothesis"})
_ANY_NAME = re.compile(r"\b(?:" + "|".join(sorted(HYPOTHESIS_NAMES)) + r")\b")


def build_suite_module(task: Task, suite: str) -> str:
    """Source of the pytest module for one suite of a task."""
    names = (task.entry_point, *task.extra_entry_points)
    binding = ", ".join(names) + ("," if len(names) == 1 else "")
    body = task.suites[suite]
    reference = "import reference\n" if names_reference(body) else ""
    preamble = PREAMBLE.format(hypothesis=HYPOTHESIS_IMPORTS if uses_hypothesis(body) else "", reference=reference)
    return f"{preamble}\n{binding} = _load_entry_points({names!r})\n\n{body}\n"


_REFERENCE = re.compile(r"\breference\b")


def names_reference(body: str) -> bool:
    """Whether suite text names the module `reference` (a differential check against the reference solution)."""
    return _REFERENCE.search(body) is not None


def needs_reference(task: Task, suites) -> bool:
    """Whether any of the task's `suites` names `reference`: only then does the job carry reference.py."""
    return any(names_reference(task.suites[suite]) for suite in suites if suite in task.suites)


@functools.lru_cache(maxsize=4096)
def uses_hypothesis(body: str) -> bool:
    """Whether suite text names one of HYPOTHESIS_NAMES or imports hypothesis (True if it has one of the
    words but does not parse: the session then reports the error with those names in scope)."""
    if not _ANY_NAME.search(body):  # most suites: no parse needed
        return False
    try:
        tree = parse_tree(body)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in HYPOTHESIS_NAMES:
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "hypothesis" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hypothesis":
            return True
    return False


def suite_file_name(suite: str) -> str:
    """File name of a suite's module inside a candidate's working directory."""
    return f"test_{suite}.py"
