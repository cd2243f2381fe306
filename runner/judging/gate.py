"""The AST gate: policy rules over a candidate's syntax tree, configured by GateConfig.

The gate is policy, not security (the sandbox is the boundary). Each rule has a stable name; a
rejection names the rule and the line: "rule no-import at line 3: `import os` is not allowed; ...".
Rules: no-import, no-relative-import, no-class, no-global, only-entry-points, no-top-level-code,
forbidden-call, no-dunder-attribute. Syntax errors are the caller's to find first (ast.parse).

Two modes (`gate.mode`): `enforce` makes the first violation the outcome `policy_rejected` and the code
never runs; `report` runs the code anyway and records every violation beside the functional outcome.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from runner.config import GateConfig, GateMode
from runner.syntax_tree import parse_tree

_BUILTINS_MODULES = frozenset({"builtins", "__builtins__"})
_SAFE_DUNDER_NAMES = frozenset({"__name__"})


@dataclass(frozen=True)
class GateViolation:
    """One rejection: the rule that fired, the 1-based line, and a message saying what to change."""

    rule: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"rule {self.rule} at line {self.line}: {self.message}"


def _snippet(node: ast.AST) -> str:
    text = ast.unparse(node).split("\n")[0]
    return text if len(text) <= 80 else text[:77] + "..."


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)


class _Checker(ast.NodeVisitor):
    def __init__(self, gate: GateConfig) -> None:
        self.gate = gate
        self.allowed = frozenset(gate.allowed_imports)
        self.forbidden = frozenset(gate.forbidden_calls)
        self.found: list[GateViolation] = []

    def _flag(self, rule: str, node: ast.AST, message: str) -> None:
        self.found.append(GateViolation(rule, getattr(node, "lineno", 0), message))

    def _allowed_text(self) -> str:
        return ", ".join(sorted(self.allowed)) or "none"

    def _check_module(self, node: ast.AST, module: str) -> None:
        if module.split(".")[0] not in self.allowed:
            message = f"`{_snippet(node)}` is not allowed; allowed imports: {self._allowed_text()}"
            self._flag("no-import", node, message)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag("no-relative-import", node, f"`{_snippet(node)}`: relative imports are never allowed")
        else:
            self._check_module(node, node.module or "")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if not self.gate.allow_classes:
            self._flag("no-class", node, f"class `{node.name}` is not allowed; write plain functions")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        if not self.gate.allow_global_statements:
            self._flag("no-global", node, f"`{_snippet(node)}` is not allowed; pass values as arguments")

    visit_Nonlocal = visit_Global

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = None
        if isinstance(func, ast.Name) and func.id in self.forbidden:
            name = func.id
        elif (
            isinstance(func, ast.Attribute)
            and func.attr in self.forbidden
            and isinstance(func.value, ast.Name)
            and func.value.id in _BUILTINS_MODULES
        ):
            name = f"{func.value.id}.{func.attr}"
        if name is not None:
            self._flag("forbidden-call", node, f"calling `{name}` is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_dunder(node.attr) and not self.gate.allow_dunder_attributes:
            self._flag("no-dunder-attribute", node, f"dunder attribute `.{node.attr}` is not allowed")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        dunder = _is_dunder(node.id) and node.id not in _SAFE_DUNDER_NAMES
        if dunder and not self.gate.allow_dunder_attributes:
            self._flag("no-dunder-attribute", node, f"dunder name `{node.id}` is not allowed")


def _check_top_level(tree: ast.Module, gate: GateConfig, entry_points: tuple[str, ...]) -> list[GateViolation]:
    found = []
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # module docstring
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom | ast.ClassDef):
            continue  # judged by their own rules
        if gate.allow_extra_top_level:
            helper = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Pass)
            helper = helper or isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
            helper = helper or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
            if not (helper or _is_main_guard(node)):
                message = f"`{_snippet(node)}`: top-level code runs on import; move it into a function"
                found.append(GateViolation("no-top-level-code", node.lineno, message))
        elif not (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in entry_points):
            wanted = ", ".join(f"`{name}`" for name in entry_points)
            message = f"`{_snippet(node)}`: only the function(s) {wanted} may appear at top level"
            found.append(GateViolation("only-entry-points", node.lineno, message))
    return found


def gate_violations(code: str, gate: GateConfig, entry_points: tuple[str, ...]) -> list[GateViolation]:
    """Every violation of the gate's rules by `code`, in source order (empty if it passes).

    `code` must parse (raises SyntaxError otherwise). `gate.enabled = False` disables every rule.
    """
    if not gate.enabled:
        return []
    tree = parse_tree(code)
    checker = _Checker(gate)
    checker.visit(tree)
    return sorted(checker.found + _check_top_level(tree, gate, entry_points), key=lambda v: v.line)


def check_gate(code: str, gate: GateConfig, entry_points: tuple[str, ...]) -> GateViolation | None:
    """The first violation (in source order) of the gate's rules by `code`, or None if it passes."""
    found = gate_violations(code, gate, entry_points)
    return found[0] if found else None


def reports_only(gate: GateConfig) -> bool:
    """True in `report` mode (violations are recorded, the candidate runs); False in `enforce` mode.

    The mode was checked once, where the config was typed (runner.validation).
    """
    return gate.mode == GateMode.report
