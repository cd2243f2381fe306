"""A task's inputs beyond its prompt's examples, and what its reference returns on them.

Inputs come from the task's own suites (calls of the entry point, or of HumanEval's `candidate`, with literal
arguments) and its plus inputs (the table shipped with an EvalPlus task). The reference runs on them the way
EvalPlus's expected outputs are computed (runner.tasks.plus_oracle: a fresh trusted process of ours, never the
sandbox, cached by content), through a probe that returns each output's type name and repr, so any output,
picklable or not, comes back as text.
"""

from __future__ import annotations

import ast
import pickle
from dataclasses import dataclass
from pathlib import Path

from runner.syntax_tree import parse_tree
from runner.tasks import plus_oracle
from runner.tasks.model import Task

PROBE = "_twin_probe"
_PROBE_SOURCE = """

def {probe}(*args):
    out = {entry_point}(*args)
    text = repr(out)
    items = sorted({{type(x).__name__ for x in out}}) if isinstance(out, list | tuple) else []
    return type(out).__name__, (text if len(text) <= {longest} else None), items
"""
LONGEST_SHOWN = 300
"""Outputs with a longer repr are not shown (their text comes back as None)."""
_CONVERT = "__import__('ast').literal_eval(args)"


@dataclass(frozen=True)
class Output:
    """What the reference returned on one input: ok (False: it raised), type name, repr (None when too long) and,
    for a list or tuple, the type names of its items."""

    ok: bool
    type: str = ""
    text: str | None = None
    items: tuple[str, ...] = ()


def literal_repr(value) -> str | None:
    """`repr(value)` if it reads back as an equal literal, else None (an object, nan, a huge int)."""
    try:
        text = repr(value)
        return text if ast.literal_eval(text) == value else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _literal_args(call: ast.Call) -> tuple | None:
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    try:
        return tuple(ast.literal_eval(a) for a in call.args)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def suite_inputs(task: Task) -> list[tuple]:
    """Argument tuples of the calls with literal arguments to the entry point (or `candidate`) in the suites."""
    names = {task.entry_point, "candidate"}
    found = []
    for body in task.suites.values():
        try:
            tree = parse_tree(body)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
                args = _literal_args(node)
                if args is not None:
                    found.append(args)
    return found


def plus_rows(task: Task) -> list[tuple[tuple, tuple | None]]:
    """The plus inputs' (args, (ok, output) or None when not stored) of an EvalPlus task; [] for others."""
    table = task.files.get(plus_oracle.DATA_FILE)
    if table is None:
        return []
    rows = []
    for args, expected, _ in pickle.loads(table):
        stored = pickle.loads(expected) if type(expected) is bytes and expected else None
        rows.append((pickle.loads(args), stored))
    return rows


def call_args(call: str) -> tuple | None:
    """The literal argument tuple of a call's text, e.g. "f(1, [2])" -> (1, [2])."""
    try:
        node = parse_tree(call.strip(), mode="eval").body
    except SyntaxError:
        return None
    return _literal_args(node) if isinstance(node, ast.Call) else None


def probe(tasks_inputs: list[tuple[Task, list[tuple]]], cache_dir: str | Path) -> list[list[Output]]:
    """The reference's output on each input of each task, computed in trusted processes (plus_oracle) and cached."""
    requests = []
    for task, inputs in tasks_inputs:
        source = task.reference + _PROBE_SOURCE.format(probe=PROBE, entry_point=task.entry_point, longest=LONGEST_SHOWN)
        texts = [repr(list(args)) for args in inputs]
        requests.append(plus_oracle.OracleRequest(source, PROBE, texts, convert=_CONVERT))
    found = plus_oracle.oracles(requests, cache_dir) if requests else []
    results = []
    for oracle in found:
        outputs = []
        for _, expected, _ in pickle.loads(oracle.table):
            ok, value = pickle.loads(expected) if type(expected) is bytes and expected else (False, None)
            outputs.append(Output(True, value[0], value[1], tuple(value[2])) if ok else Output(False))
        results.append(outputs)
    return results
