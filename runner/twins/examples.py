"""The examples a prompt shows, found where they are written, and the prompt with other ones written there.

The forms are those runner.tasks.importers turns into visible tests: HumanEval's `>>> f(x)` line and its
output, an inline `f(x) == y` / `f(x) ➞ y` / `f(x) should return y`, and MBPP's `assert ...` line (any
assertion around one call of the entry point with literal arguments, e.g. `assert set(f(x)) == set(y)` or
`assert math.isclose(f(x), 1.5, rel_tol=0.001)`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from runner.syntax_tree import parse_tree
from runner.tasks.importers import _OUTPUT_ENDS, _is_call, _literal
from runner.twins.inputs import call_args
from runner.twins.rename import NotTwinnable

_SEPARATORS = re.compile(r"\s*(?:==>|==|➞|=>|->|→|=|should return|returns)\s*")
"""Between an inline example's call and its output: the importers' forms, and HumanEval's `==>` and ` = `."""
_EXAMPLE_WORDS = re.compile(r"\b(?:[Oo]utput|[Ii]nput)\s*:|==>|=>|➞|→")


@dataclass(frozen=True)
class Example:
    """One example: lines [first, end) of the prompt, the call's text and the expected output's text (None for a
    bare `assert f(x)` / `assert not f(x)`)."""

    first: int
    end: int
    call: str
    expected: str | None
    form: str  # "doctest", "inline" or "assert"
    col: int = 0  # where an inline example's call starts on its line

    @property
    def args(self) -> tuple | None:
        return call_args(self.call)


def _doctest(lines: list[str], index: int, entry_point: str) -> Example | None:
    line = lines[index].strip()
    if not (line.startswith(">>>") and _is_call(line[3:], entry_point)):
        return None
    end = index + 1
    while end < len(lines) and lines[end].strip() and not lines[end].strip().startswith(_OUTPUT_ENDS):
        end += 1
    expected = _literal(" ".join(x.strip() for x in lines[index + 1 : end]))
    return Example(index, end, line[3:].strip(), expected, "doctest") if expected is not None else None


def _assert_parts(line: str, entry_point: str) -> tuple[ast.Call, list[ast.AST]] | None:
    """The entry point's call in an `assert` line and the literals outside it (not keyword values)."""
    try:
        tree = parse_tree(line.strip())
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    test = tree.body[0].test
    calls = [
        n
        for n in ast.walk(test)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == entry_point
        and _is_call(ast.unparse(n), entry_point)
    ]
    if len(calls) != 1:
        return None
    inside = {id(n) for n in ast.walk(calls[0])} | {id(n) for k in _keywords(test) for n in ast.walk(k)}
    literals = []

    def visit(node: ast.AST) -> None:
        if id(node) in inside:
            return
        if isinstance(node, ast.Constant | ast.List | ast.Tuple | ast.Set | ast.Dict | ast.UnaryOp):
            try:
                ast.literal_eval(node)
                literals.append(node)
                return
            except (ValueError, SyntaxError, TypeError):
                pass
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(test)
    return calls[0], literals


def _keywords(test: ast.AST) -> list[ast.AST]:
    return [k.value for n in ast.walk(test) if isinstance(n, ast.Call) for k in n.keywords]


def find_examples(prompt: str, entry_point: str) -> list[Example]:
    """Every example the prompt shows, in order."""
    lines, found, index = prompt.splitlines(), [], 0
    while index < len(lines):
        example = _doctest(lines, index, entry_point)
        if example is not None:
            found.append(example)
            index = example.end
            continue
        stripped = lines[index].strip().removeprefix(">>>").strip()
        parts = _assert_parts(stripped, entry_point) if stripped.startswith("assert ") else None
        if parts is not None and len(parts[1]) <= 1:
            call, literals = parts
            expected = ast.unparse(literals[0]) if literals else None
            found.append(Example(index, index + 1, ast.get_source_segment(stripped, call), expected, "assert"))
        else:
            for col, call, expected in _inline(lines[index], entry_point):
                found.append(Example(index, index + 1, call, expected, "inline", col))
        index += 1
    return found


def _inline(line: str, entry_point: str) -> list[tuple[int, str, str]]:
    """Each inline example of a line: (column of its call, call, expected literal)."""
    found = []
    for match in re.finditer(rf"(?<![\w.]){re.escape(entry_point)}\(", line):
        rest = line[match.start() :]
        for sep in _SEPARATORS.finditer(rest):
            call, expected = rest[: sep.start()], _leading_literal(rest[sep.end() :])
            if expected is not None and _is_call(call, entry_point):
                found.append((match.start(), call.strip(), expected))
                break
    return found


def _leading_literal(text: str) -> str | None:
    """The longest start of `text` that is a literal (`[1, 2]` of `[1, 2]; f(3) == ...`), not ending in a comma."""
    cuts = sorted({len(text), *(i for i, c in enumerate(text) if c in " ;,")}, reverse=True)
    for cut in cuts:
        head = text[:cut].rstrip()
        if head and not head.endswith(",") and _literal(head) is not None:
            return _literal(head)
    return None


def _rewrite_assert(line: str, entry_point: str, call: str, output: str, output_value) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    stripped = line.strip()
    prefix = stripped[: len(stripped) - len(stripped.removeprefix(">>>").lstrip())]
    body = stripped[len(prefix) :]
    old_call, literals = _assert_parts(body, entry_point)
    spans = [(old_call, call)] + ([(literals[0], output)] if literals else [])
    if not literals:
        if type(output_value) is not bool:
            raise NotTwinnable(f"the example `{body}` asserts a truth value; the new output {output} is not a bool")
        return f"{indent}{prefix}assert {'' if output_value else 'not '}{call}"
    for node, text in sorted(spans, key=lambda s: -s[0].col_offset):
        body = body[: node.col_offset] + text + body[node.end_col_offset :]
    return f"{indent}{prefix}{body}"


def rewrite(prompt: str, entry_point: str, examples: list[Example], shown: list[tuple[str, str, object]]) -> str:
    """The prompt with each example replaced by one of `shown` (call text, output text, output value), in order;
    examples beyond `shown` are deleted, which only a doctest or assert line can be (else NotTwinnable)."""
    lines = prompt.splitlines()
    tail = "\n" if prompt.endswith("\n") else ""
    surplus = examples[len(shown) :]
    if any(e.form == "inline" for e in surplus):
        raise NotTwinnable(f"fewer other inputs than examples, and the example {surplus[0].call} is part of a sentence")
    for example in sorted(surplus, key=lambda e: -e.first):
        del lines[example.first : example.end]
    pairs = sorted(zip(examples, shown, strict=False), key=lambda p: (-p[0].first, -p[0].col))
    for example, (call, output, value) in pairs:
        line = lines[example.first]
        indent = line[: len(line) - len(line.lstrip())]
        if example.form == "doctest":
            new = [f"{indent}>>> {call}", f"{indent}{output}"]
        elif example.form == "assert":
            new = [_rewrite_assert(line, entry_point, call, output, value)]
        else:
            start = example.col
            after = line[start + len(example.call) :]
            sep = _SEPARATORS.search(after)
            rest = after[sep.end() :]
            lead = rest[: len(rest) - len(rest.lstrip())]
            new = [line[:start] + call + after[: sep.end()] + lead + output + rest.lstrip()[len(example.expected) :]]
        lines[example.first : example.end] = new
    return "\n".join(lines) + tail


def unfound_examples(prompt: str, examples: list[Example]) -> bool:
    """Whether the prompt seems to show examples in some form find_examples does not read (`Input: ... Output:`)."""
    lines = prompt.splitlines()
    covered = {i for e in examples for i in range(e.first, e.end)}
    return any(_EXAMPLE_WORDS.search(line) for i, line in enumerate(lines) if i not in covered and "def " not in line)
