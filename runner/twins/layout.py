"""The format family (ReCode's format perturbations): the same words laid out differently, meaning untouched.

A prompt that is code: its docstrings become comments (ReCode's doc2comments), its indentation halves (4 spaces
to 2), a `def` whose parameters fit one line gets one parameter per line, and a blank line follows each `def`
line; long comment lines are split at word boundaries. The result must parse to the same syntax tree as the
original minus its docstrings (checked: else NotTwinnable). A prompt that is prose: each item (a line and the
indented lines that continue it) on one line, a blank line between items.
"""

from __future__ import annotations

import ast
import inspect
import io
import textwrap
import tokenize

from runner.syntax_tree import parse_tree
from runner.tasks.importers import _literal
from runner.twins.rename import NotTwinnable, docstrings

WIDTH = 60
"""Prose and comment lines longer than this are split."""


def _without_docstrings(tree: ast.Module) -> str:
    for owner, _ in docstrings(tree):
        owner.body = owner.body[1:] or ([] if isinstance(owner, ast.Module) else [ast.Pass()])
    return ast.dump(tree)


def _code_like(line: str) -> bool:
    text = line.strip()
    if text.startswith((">>>", "assert ", "def ", "return ")) or line.startswith((" ", "\t")) or "==" in text:
        return True
    return _literal(text) is not None


def _wrapped(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if len(line) > WIDTH and not _code_like(line):
            out += textwrap.wrap(line, WIDTH, break_long_words=False, break_on_hyphens=False)
        else:
            out.append(line)
    return out


def _as_comments(source: str) -> str:
    """Each docstring replaced by comment lines at its indentation (the whole docstring's lines)."""
    tree = parse_tree(source)
    lines = source.splitlines()
    for doc in sorted((d for _, d in docstrings(tree)), key=lambda d: -d.lineno):
        first, last = lines[doc.lineno - 1], lines[doc.end_lineno - 1]
        if first[: len(first) - len(first.lstrip())] != first[: doc.col_offset] or last.rstrip()[-1:] not in "\"'":
            raise NotTwinnable("a docstring shares its lines with code")
        indent = " " * doc.col_offset
        text = inspect.cleandoc(doc.value).split("\n")
        lines[doc.lineno - 1 : doc.end_lineno] = [f"{indent}# {x}".rstrip() for x in _wrapped(text)]
    return "\n".join(lines) + "\n"


def _reindented(source: str) -> str:
    """Indentation halved on every line outside a multi-line string."""
    inside: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING and token.end[0] > token.start[0]:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    out = []
    for number, line in enumerate(source.splitlines(), start=1):
        spaces = len(line) - len(line.lstrip(" "))
        out.append(line if number in inside else " " * (spaces // 2) + line[spaces:])
    return "\n".join(out) + "\n"


def _parse_open(source: str) -> ast.Module:
    """The syntax tree of `source`, whose last body may be left open (a `def` with only comments): `pass` closes it."""
    try:
        return parse_tree(source)
    except SyntaxError:
        last = [line for line in source.splitlines() if line.strip()][-1]
        return parse_tree(f"{source}{last[: len(last) - len(last.lstrip())]}pass\n")


def _split_signatures(source: str) -> str:
    """Each one-line `def` with two or more parameters laid out one parameter per line; a blank line after it."""
    tree = _parse_open(source)
    lines = source.splitlines()
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for node in sorted(defs, key=lambda n: -n.lineno):
        header_end = node.body[0].lineno - 1 if node.body else node.lineno
        line = lines[node.lineno - 1]
        if header_end != node.lineno and not _single_header(lines, node):
            continue
        opening, closing = line.find("("), line.rfind(")")
        parts = _top_level_split(line[opening + 1 : closing])
        indent = line[: len(line) - len(line.lstrip())]
        if len(parts) >= 2 and opening > 0:
            params = [f"{indent}    {p.strip()}," for p in parts]
            lines[node.lineno - 1 : node.lineno] = [line[: opening + 1], *params, f"{indent}{line[closing:]}", ""]
        else:
            lines.insert(node.lineno, "")
    return "\n".join(lines) + "\n"


def _single_header(lines: list[str], node: ast.AST) -> bool:
    return lines[node.lineno - 1].rstrip().endswith(":")


def _top_level_split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p for p in [*parts, current] if p.strip()]


def _prose(prompt: str) -> str:
    """Each item (a line not indented, with the indented lines that continue it) on one line, a blank line
    between items."""
    items: list[str] = []
    for line in prompt.strip("\n").split("\n"):
        if line.strip() and line[:1] in (" ", "\t") and items and items[-1]:
            items[-1] = f"{items[-1]} {line.strip()}"
        elif line.strip():
            items.append(line.rstrip())
    return "\n\n".join(items) + "\n"


def formatted(prompt: str) -> str:
    """The format twin's prompt."""
    try:
        tree = parse_tree(prompt)
    except SyntaxError:
        tree = None
    if tree is None:
        new = _prose(prompt)
        if new.split() != prompt.split():
            raise NotTwinnable("re-laying the prose changed its words")
        if new == prompt:
            raise NotTwinnable("the prose is already laid out as short lines")
        return new
    try:
        new = _split_signatures(_reindented(_as_comments(prompt)))
    except (SyntaxError, tokenize.TokenError) as exc:
        raise NotTwinnable(f"the laid-out prompt does not parse ({exc})") from None
    if not _same_code(new, tree):
        raise NotTwinnable("the laid-out prompt does not parse to the same code")
    return new


def _same_code(new: str, tree: ast.Module) -> bool:
    """Whether `new` (a body left open at its end closed with `pass`) parses to `tree` minus its docstrings."""
    try:
        return _without_docstrings(_parse_open(new)) == _without_docstrings(tree)
    except SyntaxError:
        return False
