"""Signature check: the entry point exists at top level and can be called the way the task calls it."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from runner.syntax_tree import parse_tree


@dataclass(frozen=True)
class _Arity:
    positional: int  # how many positional parameters it names
    required: int  # how many of them have no default
    varargs: bool
    required_keywords: frozenset[str]


def _arity(args: ast.arguments) -> _Arity:
    positional = [*args.posonlyargs, *args.args]
    required_kw = {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None}
    return _Arity(len(positional), len(positional) - len(args.defaults), args.vararg is not None,
                  frozenset(required_kw))  # fmt: skip


def _find_function(code: str, name: str) -> ast.arguments | None:
    try:
        tree = parse_tree(code)
    except (SyntaxError, ValueError):
        return None
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            found = node.args
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                found = node.value.args
    return found


def _expected(entry_point: str, signature: str, reference: str) -> ast.arguments | None:
    text = signature.strip()
    if text:
        if not text.startswith(("def ", "async def ")):
            text = f"def {text}"
        found = _find_function(text.rstrip(":") + ":\n    pass\n", entry_point)
        if found is not None:
            return found
    return _find_function(reference, entry_point)


def check_signature(code: str, entry_point: str, signature: str, reference: str) -> str | None:
    """Why `code`'s entry point does not fit the task (outcome signature_mismatch), or None if it fits.

    The expected parameters come from the task's `signature` when set, else from the reference's
    def. The candidate must accept the spec's required positional arguments (defaults and *args are
    fine) and must not require more of them, nor keyword-only arguments the spec does not require.
    """
    found = _find_function(code, entry_point)
    if found is None:
        return f"entry point `{entry_point}` is not defined as a top-level function"
    spec = _expected(entry_point, signature, reference)
    if spec is None:
        return None
    want, have = _arity(spec), _arity(found)
    shown = f"expected `{signature.strip()}`" if signature.strip() else "as in the task"
    if not have.varargs and have.positional < want.required:
        return (f"`{entry_point}` accepts {have.positional} positional argument(s) but is called with "
                f"{want.required} ({shown})")  # fmt: skip
    if have.required > want.required:
        return (f"`{entry_point}` requires {have.required} positional argument(s) but is called with "
                f"as few as {want.required} ({shown})")  # fmt: skip
    extra = sorted(have.required_keywords - want.required_keywords)
    if extra:
        return f"`{entry_point}` requires keyword argument(s) {', '.join(extra)} the task never passes"
    return None
