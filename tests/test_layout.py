"""The package's shape: no import cycles between its modules or its packages, and no oversized module.

Every `import` counts, also those inside functions and under `TYPE_CHECKING`: a cycle that only works
because one side imports lazily is still a cycle in the design.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "runner"
MAX_LINES = 400
"""About 400 lines: one concept per file (README "How the code is laid out")."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of this package it imports (`from a import b` counts as a.b when b is a module)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    graph[name].add(target if target in modules else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names)
        graph[name] = {target for target in graph[name] if target in modules and target != name}
    return graph


def package_of(module: str) -> str:
    """`runner.sandbox.workers.worker` -> `runner.sandbox`; a top-level module (`runner.job.run`) is its own node."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between packages (edges inside one package dropped)."""
    packages: dict[str, set[str]] = {}
    for source, targets in graph.items():
        edges = packages.setdefault(package_of(source), set())
        edges.update(package_of(t) for t in targets if package_of(t) != package_of(source))
    return packages


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    assert "runner.sandbox.workers.pool" in graph["runner.judging.judge"]  # imported inside build_job and for typing


def test_no_module_imports_itself_back():
    assert cycles(import_graph()) == []


def test_no_package_imports_itself_back():
    assert cycles(package_graph(import_graph())) == []


def test_every_parse_goes_through_the_one_lock():
    # CPython 3.11's AST converter fails when two threads parse at once (runner/syntax_tree.py)
    calls = {
        name
        for name, path in _modules().items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "parse" and getattr(node.value, "id", None) == "ast"
    }
    assert calls == {"runner.syntax_tree"}


def test_no_module_is_oversized():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert {name: lines for name, lines in sizes.items() if lines > MAX_LINES} == {}


KIND_SWITCH = re.compile(r"""\.kind\s*(==|!=|in\b)\s*|isinstance\(\s*(job|task)\s*,""")
"""`task.kind == "repo"`, `isinstance(job, RepoRun)`: a branch on the kind of a task or a sandbox job."""


def kind_switches(root: Path = ROOT) -> list[str]:
    """`path:line` of every kind switch outside runner/kinds (where each kind's implementation answers instead)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "kinds":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if KIND_SWITCH.search(line) and "err.kind" not in line:  # a BackendError's kind is not a task kind
                found.append(f"{path.relative_to(root.parent)}:{number}")
    return found


def test_the_switch_finder_sees_both_shapes(tmp_path):
    (tmp_path / "job.py").write_text('if task.kind == "repo":\n    pass\nif isinstance(job, RepoRun):\n    pass\n')
    (tmp_path / "kinds").mkdir()
    (tmp_path / "kinds" / "repo.py").write_text('if task.kind == "repo":\n    pass\n')
    assert kind_switches(tmp_path) == [f"{tmp_path.name}/job.py:1", f"{tmp_path.name}/job.py:3"]


def test_no_kind_switch_outside_the_kinds():
    assert kind_switches() == []


CONFINE_MAX_LINES = 550
"""The boundary room (runner/sandbox/confine: isolation, limits, the supervision loop) is read first in a review."""


def test_the_boundary_room_stays_small():
    room = ROOT / "sandbox" / "confine"
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in room.glob("*.py"))
    assert 0 < lines <= CONFINE_MAX_LINES


def room_of(module: str) -> str:
    """`runner.sandbox.confine.isolation` -> `runner.sandbox.confine`; a module beside the rooms is its own."""
    parts = module.split(".")
    return ".".join(parts[:3]) if len(parts) > 3 else module


def test_the_sandbox_rooms_import_one_way():
    graph = {m: ts for m, ts in import_graph().items() if m.startswith("runner.sandbox.")}
    rooms: dict[str, set[str]] = {}
    for source, targets in graph.items():
        edges = rooms.setdefault(room_of(source), set())
        edges.update(room_of(t) for t in targets if t.startswith("runner.sandbox.") and room_of(t) != room_of(source))
    assert cycles(rooms) == []
    assert not rooms["runner.sandbox.confine"]  # the boundary depends on no other part of the sandbox
