"""Load task sets from YAML, with errors that name the file and field and say what to change."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from runner.syntax_tree import parse_tree
from runner.tasks.fields import TaskError, check_id, check_keys, load_date, read_mapping, string_list
from runner.tasks.model import SUITES, EdgeCase, PerfInput, Task
from runner.tasks.repo_loader import is_repo_task_dir, load_repo_task
from runner.tasks.repo_task import RepoTask

__all__ = ["TaskError", "load_task_dir", "load_task_file"]

REQUIRED = ("id", "entry_point", "prompt", "reference", "suites")
OPTIONAL = ("kind", "signature", "tags", "created", "extra_entry_points", "edge_cases", "perf_inputs", "references")


def load_task_file(path: str | Path) -> Task:
    """Parse and validate one task YAML file."""
    path = Path(path)
    if not path.is_file():
        raise TaskError(path, None, "is not a file; a task is one YAML file (move or rename this entry)")
    data = read_mapping(path, REQUIRED)
    check_keys(path, data, REQUIRED, OPTIONAL, "top level")
    for key in ("id", "entry_point", "prompt", "reference", "signature"):
        if key in data and not (isinstance(data[key], str) and data[key].strip()):
            raise TaskError(path, key, "must be a non-empty string")
    check_id(path, data["id"])
    if data.get("kind", "function") != "function":
        problem = f"is {data['kind']!r}; a task file is `kind: function` (a repo task is a directory)"
        raise TaskError(path, "kind", problem)
    suites = _load_suites(path, data["suites"])
    extra = tuple(string_list(path, data, "extra_entry_points"))
    _check_reference(path, data["reference"], (data["entry_point"], *extra))
    return Task(
        id=data["id"],
        entry_point=data["entry_point"],
        prompt=data["prompt"],
        reference=data["reference"],
        suites=suites,
        signature=data.get("signature", ""),
        tags=tuple(string_list(path, data, "tags")),
        created=load_date(path, data.get("created")),
        source=str(path),
        extra_entry_points=extra,
        edge_cases=_load_edge_cases(path, data.get("edge_cases", [])),
        perf_inputs=_load_perf_inputs(path, data.get("perf_inputs", [])),
        references=_load_references(path, data.get("references", []), (data["entry_point"], *extra)),
    )


def load_task_dir(directory: str | Path) -> list[Task | RepoTask]:
    """Load every task of a task set: each `*.yaml` / `*.yml` file (a function task) and each subdirectory
    holding a `task.yaml` (a repo task), sorted by name; ids must be unique across both kinds."""
    directory = Path(directory)
    if not directory.is_dir():
        raise TaskError(directory, None, "task set directory not found; set task_set.path to a directory of YAML tasks")
    repo_dirs = filter(is_repo_task_dir, directory.iterdir())
    entries = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml"), *repo_dirs])
    if not entries:
        raise TaskError(directory, None, "contains no *.yaml task files and no task directories (with a task.yaml)")
    tasks, seen = [], {}
    for entry in entries:
        task = load_repo_task(entry) if is_repo_task_dir(entry) else load_task_file(entry)
        if task.id in seen:
            raise TaskError(
                entry, "id", f"duplicate id {task.id!r} (also in {seen[task.id]}); give each task its own id"
            )
        seen[task.id] = entry
        tasks.append(task)
    return tasks


def _load_suites(path: Path, suites: Any) -> dict[str, str]:
    if not isinstance(suites, dict):
        raise TaskError(path, "suites", f"must be a mapping with keys among {', '.join(SUITES)}")
    check_keys(path, suites, ("visible",), ("hidden", "properties"), "suites")
    loaded = {}
    for name in SUITES:
        if name not in suites:
            continue
        field = f"suites.{name}"
        source = suites[name]
        if not isinstance(source, str) or not source.strip():
            raise TaskError(path, field, "must be the non-empty source of pytest test functions")
        tree = _parse(path, field, source)
        if not any(isinstance(n, ast.FunctionDef) and n.name.startswith("test") for n in tree.body):
            raise TaskError(path, field, "defines no test; add top-level `def test_...():` functions")
        loaded[name] = source
    return loaded


def _load_edge_cases(path: Path, value: Any) -> tuple[EdgeCase, ...]:
    if not isinstance(value, list):
        raise TaskError(path, "edge_cases", "must be a list of {name: ..., when: <expression over the arguments>}")
    cases, names = [], set()
    for index, item in enumerate(value):
        field = f"edge_cases[{index}]"
        if not isinstance(item, dict):
            raise TaskError(path, field, "must be a mapping with keys name and when")
        check_keys(path, item, ("name", "when"), (), field)
        for key in ("name", "when"):
            if not (isinstance(item[key], str) and item[key].strip()):
                raise TaskError(path, f"{field}.{key}", "must be a non-empty string")
        if item["name"] in names:
            raise TaskError(path, f"{field}.name", f"duplicate edge case {item['name']!r}; give each its own name")
        try:
            parse_tree(item["when"], mode="eval")
        except SyntaxError as exc:
            raise TaskError(path, f"{field}.when", f"is not a Python expression: {exc.msg}") from None
        names.add(item["name"])
        cases.append(EdgeCase(item["name"], item["when"]))
    return tuple(cases)


def _load_perf_inputs(path: Path, value: Any) -> tuple[PerfInput, ...]:
    shape = "must be a list of {args: [...]} or {generator: <source defining generate(size)>, size: N}"
    if not isinstance(value, list):
        raise TaskError(path, "perf_inputs", shape)
    loaded = []
    for index, item in enumerate(value):
        field = f"perf_inputs[{index}]"
        if not isinstance(item, dict) or not ({"args"} <= item.keys() or {"generator", "size"} <= item.keys()):
            raise TaskError(path, field, shape)
        if "args" in item:
            check_keys(path, item, ("args",), (), field)
            if not isinstance(item["args"], list):
                raise TaskError(path, f"{field}.args", "must be the list of the entry point's arguments")
            loaded.append(PerfInput(args=tuple(item["args"])))
            continue
        check_keys(path, item, ("generator", "size"), (), field)
        size = item["size"]
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise TaskError(path, f"{field}.size", "must be a whole number, 0 or more")
        if not isinstance(item["generator"], str) or not item["generator"].strip():
            raise TaskError(path, f"{field}.generator", "must be Python source defining generate(size)")
        tree = _parse(path, f"{field}.generator", item["generator"])
        if not any(isinstance(n, ast.FunctionDef) and n.name == "generate" for n in tree.body):
            raise TaskError(path, f"{field}.generator", "defines no `generate(size)` at top level")
        loaded.append(PerfInput(generator=item["generator"], size=size))
    return tuple(loaded)


def _load_references(path: Path, value: Any, entry_points: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise TaskError(path, "references", "must be a list of reference sources, slow to fast")
    for index, source in enumerate(value):
        _check_reference(path, source, entry_points, f"references[{index}]")
    return tuple(value)


def _check_reference(path: Path, source: str, entry_points: tuple[str, ...], field: str = "reference") -> None:
    tree = _parse(path, field, source)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for name in entry_points:
        if name not in defined:
            raise TaskError(path, field, f"does not define the entry point `{name}` at top level")


def _parse(path: Path, field: str, source: str) -> ast.Module:
    try:
        return parse_tree(source)
    except SyntaxError as exc:
        raise TaskError(path, field, f"does not parse: {exc.msg} at line {exc.lineno} of that field") from None
