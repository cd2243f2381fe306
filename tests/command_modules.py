"""The modules under runner/ that run as commands (`python -m runner.X`), found from their source.

A module is a command when it has a top-level `if __name__ == "__main__":` block. Every one must answer
`--help` (tests/test_help.py) unless it is an internal entry point listed in INTERNAL with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "runner"
INTERNAL = {
    "runner.sandbox.workers.worker": "the sandbox pool's warm worker, started by the pool with pipes, never by a user",
    "runner.sandbox.child.repo_plugin": "runs inside a repo task's confined pytest child, reading fd 3; not a command",
    "runner.tasks.plus_oracle": "one share of the plus-input oracle, given two pickle files by its parent",
}
"""Entry points that only the harness starts, with their own private arguments."""


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    parts = [node.test.left, *node.test.comparators]
    names = [p.id for p in parts if isinstance(p, ast.Name)]
    texts = [p.value for p in parts if isinstance(p, ast.Constant)]
    return names == ["__name__"] and texts == ["__main__"]


def entry_points() -> list[str]:
    """Every module of the package with a top-level `if __name__ == "__main__":` block, by dotted name."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(_is_main_guard(node) for node in ast.parse(path.read_text(encoding="utf-8")).body):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__main__" else parts))
    return found


def command_modules() -> list[str]:
    """The entry points users run: every one but INTERNAL's."""
    return [m for m in entry_points() if m not in INTERNAL]
