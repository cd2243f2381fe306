"""The rename family: the entry point, its parameters and the functions the prompt defines get new plain names.

Code is rewritten through Python's own parser and tokenizer, never by text search: a name is replaced where
the syntax tree has it as that name (a `Name`, a `def`, an `arg`, a keyword of a call to a renamed function,
`from reference import ...`, `reference.<name>`), so a string literal, an attribute of something else or a
keyword of another call keeps its text. Prose (docstrings, comments, a prompt that is not code) is rewritten at
word boundaries; a name that is also an English word only where it reads as code (RENAMED_IN_PROSE).
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize

from runner.syntax_tree import parse_tree
from runner.tasks.model import Task
from runner.twins.names import ENGLISH, fresh_names


class NotTwinnable(ValueError):
    """A task this family cannot make a twin of; the message says why."""


def _prose_pattern(name: str) -> re.Pattern:
    if name.lower() in ENGLISH:  # the word itself elsewhere: only `name` or name( is the identifier
        return re.compile(rf"(?<=`){re.escape(name)}(?=`)|(?<![\w\\'’.]){re.escape(name)}(?=\()")
    return re.compile(rf"(?<![\w\\'’.]){re.escape(name)}(?![\w'’])")


def rename_prose(text: str, mapping: dict[str, str]) -> str:
    """`text` with every name of `mapping` replaced at word boundaries (English-word names only as code)."""
    for old, new in sorted(mapping.items(), key=lambda item: -len(item[0])):
        text = _prose_pattern(old).sub(new, text)
    return text


def _offsets(source: str) -> list[int]:
    starts, total = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


class _Edits:
    """Replacements at AST positions (UTF-8 byte columns) or character offsets, applied together."""

    def __init__(self, source: str) -> None:
        self.source, self.lines = source, source.splitlines(keepends=True)
        self.starts = _offsets(source)
        self.spans: dict[int, tuple[int, str]] = {}

    def at(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode()[:byte_col].decode(errors="ignore"))

    def name(self, lineno: int, byte_col: int, old: str, new: str) -> None:
        start = self.at(lineno, byte_col)
        if self.source[start : start + len(old)] != old:
            raise NotTwinnable(f"the name {old!r} is not where the syntax tree puts it")
        self.spans[start] = (start + len(old), new)

    def span(self, start: int, end: int, new: str) -> None:
        self.spans[start] = (end, new)

    def applied(self) -> str:
        out, cursor = [], 0
        for start in sorted(self.spans):
            end, new = self.spans[start]
            if start < cursor:
                raise NotTwinnable("two renames overlap")
            out += [self.source[cursor:start], new]
            cursor = end
        return "".join(out) + self.source[cursor:]


def docstrings(tree: ast.Module) -> list[tuple[ast.AST, ast.Constant]]:
    """Each docstring of a module, class or function: (its owner, the string)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    found.append((node, first.value))
    return found


def _def_name(edits: _Edits, node: ast.AST, new: str) -> None:
    line = edits.lines[node.lineno - 1]
    head = line.encode()[node.col_offset :].decode(errors="ignore")
    found = re.match(rf"(?:async\s+)?(?:def|class)\s+({re.escape(node.name)})\b", head)
    if found is None:
        raise NotTwinnable(f"cannot find the name of `def {node.name}` on its line")
    byte_col = node.col_offset + len(head[: found.start(1)].encode())
    edits.name(node.lineno, byte_col, node.name, new)


def rename_code(source: str, functions: dict[str, str], params: dict[str, str], owner: str) -> str:
    """`source` with the `functions` renamed wherever they are named, and the `params` of the function `owner`
    (its old name) renamed inside it and as keywords of calls to it; docstrings and comments as prose."""
    try:
        tree = parse_tree(source)
    except SyntaxError as exc:
        raise NotTwinnable(f"does not parse ({exc.msg}), so it cannot be renamed") from None
    edits = _Edits(source)
    scoped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == owner:
            scoped.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            new = functions.get(node.id) or (params.get(node.id) if id(node) in scoped else None)
            if new:
                edits.name(node.lineno, node.col_offset, node.id, new)
        elif isinstance(node, ast.arg) and id(node) in scoped and node.arg in params:
            edits.name(node.lineno, node.col_offset, node.arg, params[node.arg])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in functions:
            _def_name(edits, node, functions[node.name])
        elif isinstance(node, ast.ImportFrom) and node.module == "reference":
            for alias in node.names:
                if alias.name in functions:
                    edits.name(alias.lineno, alias.col_offset, alias.name, functions[alias.name])
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "reference":
            if node.attr in functions:
                edits.name(node.end_lineno, node.end_col_offset - len(node.attr), node.attr, functions[node.attr])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == owner:
            for kw in node.keywords:
                if kw.arg in params:
                    edits.name(kw.lineno, kw.col_offset, kw.arg, params[kw.arg])
    prose = {**functions, **params}
    for _, doc in docstrings(tree):
        start, end = edits.at(doc.lineno, doc.col_offset), edits.at(doc.end_lineno, doc.end_col_offset)
        edits.span(start, end, rename_prose(source[start:end], prose))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            start = edits.starts[token.start[0] - 1] + token.start[1]
            edits.span(start, start + len(token.string), rename_prose(token.string, prose))
    return edits.applied()


def rename_text(text: str, functions: dict[str, str], params: dict[str, str], owner: str) -> str:
    """A prompt renamed: as code when it parses, else as prose."""
    try:
        parse_tree(text)
    except SyntaxError:
        return rename_prose(text, {**functions, **params})
    return rename_code(text, functions, params, owner)


def _signature(signature: str, functions: dict[str, str], params: dict[str, str], owner: str) -> str:
    if not signature:
        return ""
    body = "\n    ...\n"
    return rename_code(f"{signature}:{body}", functions, params, owner).removesuffix(f":{body}")


def entry_parameters(task: Task) -> list[str]:
    """The entry point's parameter names, from the reference's definition of it."""
    tree = parse_tree(task.reference)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == task.entry_point:
            a = node.args
            return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None]
    raise NotTwinnable(f"the reference defines no top-level `{task.entry_point}`")


def prompt_functions(task: Task) -> list[str]:
    """The entry points and the other functions (and classes) the prompt defines, in order, each once."""
    names = [task.entry_point, *task.extra_entry_points]
    try:
        tree = parse_tree(task.prompt)
    except SyntaxError:
        return names
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    return names + [n for n in defined if n not in names]


def identifiers(*sources: str) -> set[str]:
    """Every identifier-like word of the sources (names a fresh name must not collide with)."""
    return {word for source in sources for word in re.findall(r"[A-Za-z_]\w*", source)}


def rename_map(task: Task, seed: int, taken: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The seeded renaming of one task: (functions, parameters), old name to new."""
    functions, params = prompt_functions(task), entry_parameters(task)
    busy = taken | identifiers(task.prompt, task.reference, task.signature, *task.suites.values())
    new = fresh_names([2] * len(functions) + [1] * len(params), f"{seed}:{task.id}:rename", busy)
    return dict(zip(functions, new[: len(functions)], strict=True)), dict(
        zip(params, new[len(functions) :], strict=True)
    )


def renamed(task: Task, functions: dict[str, str], params: dict[str, str]) -> Task:
    """The task with every field that names them rewritten through the maps (the data files unchanged)."""
    owner = task.entry_point
    suites = {name: rename_code(body, functions, params, owner) for name, body in task.suites.items()}
    return dataclasses.replace(
        task,
        entry_point=functions[owner],
        extra_entry_points=tuple(functions[n] for n in task.extra_entry_points),
        prompt=rename_text(task.prompt, functions, params, owner),
        reference=rename_code(task.reference, functions, params, owner),
        signature=_signature(task.signature, functions, params, owner),
        suites=suites,
        edge_cases=(),
        references=(),
    )


def rename_twin(task: Task, seed: int, taken: set[str]) -> Task:
    """The rename twin's content (its id and family set by the caller)."""
    functions, params = rename_map(task, seed, taken)
    return renamed(task, functions, params)
