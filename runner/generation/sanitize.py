"""Sanitizing a script-style answer: keep the module the tests need, drop the script around it.

Asked for "a self-contained Python script" (prompts=evalplus), models write the function and then run
it: example calls, prints, their own `assert`s, an `if __name__ == "__main__":` block. Importing such a
module runs all of that, and a wrong or raising example of the model's own stops a correct function
from ever being tested. EvalPlus sanitizes every answer before judging it (`evalplus/sanitize.py`);
this does the same, on Python's own parser:

- a top-level statement that does not parse (an answer cut off at the token limit, a line of prose) is
  dropped with its whole top-level block, as long as a definition of the entry point remains;
- imports are kept, and every top-level definition the entry points reach: functions, classes,
  assignments, and `if`/`try` blocks made only of those (their dependency closure, over the names each
  one reads); every other top-level statement is dropped.

Unlike EvalPlus, every definition of a name that is reached is kept (Python's last one wins, as when
the script runs), decorated definitions count as definitions, and a function needs no `return`.
Each drop is said in the notes, which the experiment adds to the attempt's `extraction`.
"""

from __future__ import annotations

import ast
import re

from runner.generation.extract import Extraction
from runner.syntax_tree import parse_tree

NOTE_PREFIX = "sanitized: "
"""Every note of `sanitize` starts with this (runner.results.scoring counts the answers it changed)."""

_MAX_REPAIRS = 8
_BLOCK_START = re.compile(r"(?!(?:else|elif|except|finally)\b)[A-Za-z_@]")
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.AugAssign)
_IMPORTS = (ast.Import, ast.ImportFrom)
_SHOWN_CHARS = 60


def sanitize(code: str, entry_points: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """(the module to judge, the notes saying what was dropped); `code` itself when nothing was dropped
    or when no parseable module defining the first entry point can be made (the judge then reports it)."""
    notes: list[str] = []
    parsed = _parseable(code, entry_points[0], notes)
    if parsed is None:
        return code, ()
    text, tree = parsed
    needed = _closure(tree.body, set(entry_points))
    kept, dropped = [], []
    for node in tree.body:
        (kept if node in needed or isinstance(node, _IMPORTS) else dropped).append(node)
    if not dropped and not notes:
        return code, ()
    if dropped:
        shown = "; ".join(_describe(text, node) for node in dropped[:3])
        more = f"; and {len(dropped) - 3} more" if len(dropped) > 3 else ""
        what = f"dropped {len(dropped)} top-level statement(s) the entry point does not use"
        notes.append(f"{NOTE_PREFIX}{what}: {shown}{more}")
    return _source(text, kept), tuple(notes)


def sanitized(extraction: Extraction, entry_points: tuple[str, ...]) -> Extraction:
    """`extraction` with its code sanitized and the notes added to its changes (no code: as it is)."""
    if extraction.code is None:
        return extraction
    code, notes = sanitize(extraction.code, entry_points)
    return Extraction(code, extraction.changes + notes)


def _parseable(code: str, entry_point: str, notes: list[str]) -> tuple[str, ast.Module] | None:
    """The code with top-level blocks that do not parse dropped, and its tree; None if that fails."""
    text = code
    for _ in range(_MAX_REPAIRS + 1):
        try:
            tree = parse_tree(text)
        except SyntaxError as err:
            lines = text.split("\n")
            start, end = _block_around(lines, min(max(err.lineno or 1, 1), len(lines)) - 1)
            where = f"line {end}" if end == start + 1 else f"lines {start + 1}-{end}"
            notes.append(
                f"{NOTE_PREFIX}dropped {where}, a block that does not parse ({err.msg}): {_clip(lines[start])}"
            )
            text = "\n".join(lines[:start] + [""] * (end - start) + lines[end:])  # line numbers stay
            continue
        except ValueError:  # null bytes
            return None
        return (text, tree) if _defines(tree, entry_point) else None
    return None


def _block_around(lines: list[str], index: int) -> tuple[int, int]:
    """[start, end) of the top-level block holding line `index`: from the line at column 0 that starts
    it (with the decorators above) to the next such line."""
    start = index
    while start > 0 and not _BLOCK_START.match(lines[start]):
        start -= 1
    while start > 0 and lines[start - 1].startswith("@"):
        start -= 1
    end = index + 1
    while end < len(lines) and not _BLOCK_START.match(lines[end]):
        end += 1
    while end > index + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name for n in tree.body)


def _binds(node: ast.stmt) -> set[str]:
    """The names a top-level statement may define for the module, if it is a definition (else empty):
    a def, class or assignment, or an if/try block made only of imports, definitions and `pass`."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return set()
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(node, ast.If | ast.Try) and not _is_main_guard(node):
        inner = [*node.body, *node.orelse, *getattr(node, "finalbody", ())]
        inner += [s for h in getattr(node, "handlers", ()) for s in h.body]
        names: set[str] = set()
        for stmt in inner:
            if isinstance(stmt, _IMPORTS):
                names |= {(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"}
            elif isinstance(stmt, ast.Pass):
                continue
            else:
                bound = _binds(stmt)
                if not bound:
                    return set()
                names |= bound
        return names
    return set()


def _is_main_guard(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return isinstance(test, ast.Compare) and any(isinstance(n, ast.Name) and n.id == "__name__" for n in ast.walk(test))


def _closure(body: list[ast.stmt], roots: set[str]) -> set[ast.stmt]:
    """The definitions that bind `roots` and, transitively, every name those definitions read."""
    binders: dict[str, list[ast.stmt]] = {}
    for node in body:
        for name in _binds(node):
            binders.setdefault(name, []).append(node)
    needed: set[ast.stmt] = set()
    wanted, seen = set(roots), set()
    while wanted:
        name = wanted.pop()
        seen.add(name)
        for node in binders.get(name, ()):
            if node not in needed:
                needed.add(node)
                wanted |= _free_names(node) - seen
    return needed


def _free_names(node: ast.stmt) -> set[str]:
    """Names `node` reads that it does not bind itself (parameters, local assignments, its own name):
    a rough scope analysis (a nested scope's local names count as bound throughout)."""
    read, bound = set(), set(_binds(node))
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (read if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(sub.name)
    return read - bound


def _source(text: str, kept: list[ast.stmt]) -> str:
    """The kept statements' own lines (decorators and comments inside them included), in order; a
    statement that shares a line with another (`x = 1; print(x)`) is written out from its tree."""
    lines = text.split("\n")
    parts = []
    for node in kept:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        before = lines[node.lineno - 1][: node.col_offset]
        after = lines[node.end_lineno - 1][node.end_col_offset :].strip()
        alone = not before.strip() and (not after or after.startswith("#"))
        parts.append("\n".join(lines[start - 1 : node.end_lineno]) if alone else ast.unparse(node))
    return "\n\n".join(parts).rstrip() + "\n"


def _describe(text: str, node: ast.stmt) -> str:
    return f"line {node.lineno} {_clip(ast.get_source_segment(text, node) or ast.unparse(node))}"


def _clip(line: str) -> str:
    first = line.strip().split("\n")[0]
    return repr(first if len(first) <= _SHOWN_CHARS else first[: _SHOWN_CHARS - 3] + "...")
