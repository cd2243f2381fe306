"""`ast.parse`, one thread at a time.

CPython 3.11 keeps the AST converter's recursion counter in state that every thread shares (python/cpython
gh-106905): two threads parsing at once can fail with `SystemError: AST constructor recursion depth
mismatch`, as `runner.evaluate`'s judging threads once did on bench/data's real answers. Every parse in the
runner goes through `parse_tree` (tests/test_layout.py checks).
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_tree(source: str, mode: str = "exec") -> ast.Module | ast.Expression:
    """`ast.parse(source, mode=mode)`, while no other thread of this process parses."""
    with _LOCK:
        return ast.parse(source, mode=mode)
