"""The transform family (PPM-style): the prompt asks for the original result passed through a stated, simple,
invertible transformation chosen by the result's type; the reference becomes transformation ∘ reference.

Every suite (the hand-written ones, HumanEval's `check`, the plus inputs' differential suite) still checks the
original result: it sees the answer through the inverse transformation (a candidate returning T(f(x)) passes a
suite on x exactly when f(x) would), which is a bijection on the result's type, checked strictly (an answer of
another type fails). So transformation ∘ reference is what is expected on every test input and plus input. A
visible suite built from the prompt's examples is built again from the twin's examples, which show the
transformed outputs, so repair feedback shows the values the twin asks for.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass

from runner.syntax_tree import parse_tree
from runner.tasks.model import Task
from runner.twins.rename import NotTwinnable, docstrings, rename_code


@dataclass(frozen=True)
class Transformation:
    """A stated transformation of one result type: its words, and its source both ways (over `x`)."""

    phrase: str
    forward: str
    backward: str


TRANSFORMS = {
    "list": Transformation("that list reversed (its items in the opposite order)", "x[::-1]", "x[::-1]"),
    "tuple": Transformation("that tuple reversed (its items in the opposite order)", "x[::-1]", "x[::-1]"),
    "str": Transformation("that string reversed (its characters in the opposite order)", "x[::-1]", "x[::-1]"),
    "int": Transformation("that number plus one", "x + 1", "x - 1"),
    "float": Transformation("that number negated (multiplied by -1)", "-x", "-x"),
    "bool": Transformation(
        "the opposite truth value (False where it would be True, True where False)", "not x", "not x"
    ),
}
"""Result type name -> its transformation. Each is exact both ways (no float rounding: a float is negated)."""
ACCEPTED = {
    "list": "list",
    "tuple": "tuple",
    "str": "str",
    "int": "int | float",
    "float": "int | float",
    "bool": "bool",
}
"""The types a transformed value may have (an int result compared with == accepts a float)."""
ORIGINAL = "_twin_original"
_HELPER = """

def _twin_backward(x):
    if not isinstance(x, {accepted}) or (isinstance(x, bool) and {strict_bool}):
        raise TypeError(f"the twin expects a {kind} result, got {{type(x).__name__}}: {{x!r}}")
    return {body}
"""


def helper(kind: str) -> str:
    """Source of the suites' `_twin_backward` for a result type: the inverse, for a value of an accepted type."""
    strict = "True" if kind in ("int", "float") else "False"
    return _HELPER.format(accepted=ACCEPTED[kind], strict_bool=strict, kind=kind, body=TRANSFORMS[kind].backward)


def result_kind(types: set[str]) -> str:
    """The one result type a task's reference returns, if it has a transformation (else NotTwinnable)."""
    if not types:
        raise NotTwinnable("the reference returned no value on any known input")
    if types == {"int", "float"}:  # a number either way: negated, exact for both
        return "float"
    if len(types) > 1:
        raise NotTwinnable(f"its results are of several types ({', '.join(sorted(types))})")
    (kind,) = types
    if kind not in TRANSFORMS:
        raise NotTwinnable(f"no stated transformation for a result of type {kind}")
    return kind


def apply(kind: str, value):
    """The transformation of one result value."""
    namespace = {"x": value}
    return eval(TRANSFORMS[kind].forward, {}, namespace)  # noqa: S307 (our own table of expressions)


def sentence(kind: str, shows_examples: bool, other_examples: bool) -> str:
    """The statement the twin's prompt adds (`shows_examples`: the examples written as calls were transformed;
    `other_examples`: the prompt has others, in a form left as it was)."""
    text = f"Important: do not return the result described above; return {TRANSFORMS[kind].phrase} instead."
    if shows_examples and other_examples:
        return f"{text} The examples written as calls show the value to return; any other shows the result before."
    if other_examples:
        return f"{text} The examples show the result before this change."
    return f"{text} The examples show the value to return." if shows_examples else text


def transformed_reference(task: Task, kind: str) -> str:
    """transformation ∘ reference: the entry point, with the original's parameters, holds the original function
    (renamed ORIGINAL, its recursive calls too) nested inside and returns its result transformed. Nested, not
    beside it: a gate that allows only the entry point at top level (seed10's) passes the twin's reference."""
    source = rename_code(task.reference, {task.entry_point: ORIGINAL}, {}, task.entry_point)
    lines = source.splitlines()
    for node in parse_tree(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == ORIGINAL:
            a = node.args
            passed = [x.arg for x in (*a.posonlyargs, *a.args)]
            passed += [f"*{a.vararg.arg}"] if a.vararg else []
            passed += [f"{x.arg}={x.arg}" for x in a.kwonlyargs]
            passed += [f"**{a.kwarg.arg}"] if a.kwarg else []
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            inner = [f"    {line}" if line.strip() else line for line in lines[first : node.end_lineno]]
            forward = f"(lambda x: {TRANSFORMS[kind].forward})({ORIGINAL}({', '.join(passed)}))"
            wrapper = [f"def {task.entry_point}({ast.unparse(a)}){returns}:", *inner, f"    return {forward}"]
            return "\n".join([*lines[:first], *wrapper, *lines[node.end_lineno :]]) + "\n"
    raise NotTwinnable(f"the reference defines no top-level `{task.entry_point}`")


def suite_through_inverse(body: str, entry_point: str) -> str:
    """A suite that checks the original result on the answer seen through the inverse transformation (and on the
    reference's, where the suite computes an expected output with it). The suite's calls of the entry point are
    renamed (through the parser) to a private name bound to the answer seen that way: the entry point's own name
    stays bound as in the original suite (an entry point named test_*, Mbpp/19's, must not become a test)."""
    calls_reference = re.compile(rf"\breference\.{re.escape(entry_point)}\(")
    head = f"def _twin_seen(*args, **kwargs):\n    return _twin_backward({entry_point}(*args, **kwargs))\n"
    if calls_reference.search(body):
        body = calls_reference.sub("_twin_reference(", body)
        head += (
            f"\n\ndef _twin_reference(*args, **kwargs):\n"
            f"    return _twin_backward(reference.{entry_point}(*args, **kwargs))\n"
        )
    body = rename_code(body, {entry_point: "_twin_seen"}, {}, entry_point)
    return head + "{helper}\n\n" + body


def transform_suites(task: Task, kind: str, visible: str | None) -> dict[str, str]:
    """Every suite through the inverse; the visible one replaced by `visible` when the prompt's examples made it."""
    back = helper(kind)
    suites = {
        name: suite_through_inverse(body, task.entry_point).replace("{helper}", back)
        for name, body in task.suites.items()
    }
    if visible is not None:
        suites["visible"] = visible
    return {name: body for name, body in suites.items() if body.strip()}


def with_sentence(prompt: str, text: str) -> str:
    """The prompt with `text` as the last line of its last docstring (a comment after code without one; a
    paragraph after prose)."""
    try:
        tree = parse_tree(prompt)
    except SyntaxError:
        return f"{prompt.rstrip()}\n\n{text}\n"
    docs = [doc for owner, doc in docstrings(tree) if not isinstance(owner, ast.ClassDef)]
    if not docs:
        return f"{prompt.rstrip()}\n# {text}\n"
    doc = max(docs, key=lambda d: (d.end_lineno, d.end_col_offset))
    lines = prompt.splitlines(keepends=True)
    last = lines[doc.end_lineno - 1]
    end = len(last.encode()[: doc.end_col_offset].decode(errors="ignore"))
    quote = 3 if last[:end].endswith(('"""', "'''")) else 1
    before = last[: end - quote]
    if before.strip():  # text and closing quotes on one line
        lines[doc.end_lineno - 1] = f"{before.rstrip()} {text}{last[end - quote :]}"
    else:
        indent = before if doc.lineno != doc.end_lineno else " " * doc.col_offset
        lines[doc.end_lineno - 1] = f"{indent}{text}\n{last}"
    return "".join(lines)


def transformed(task: Task, kind: str, prompt: str, visible: str | None) -> Task:
    """The transform twin's content, from the prompt with its examples' outputs transformed."""
    return dataclasses.replace(
        task,
        prompt=prompt,
        reference=transformed_reference(task, kind),
        suites=transform_suites(task, kind, visible),
        edge_cases=(),
        references=(),
    )
