"""Load task sets from YAML, with errors that name the file and field and say what to change."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from runner.tasks.model import SUITES, EdgeCase, Task

REQUIRED = ("id", "entry_point", "prompt", "reference", "suites")
OPTIONAL = ("signature", "tags", "created", "extra_entry_points", "edge_cases")


class TaskError(ValueError):
    """A task file is wrong. The message names the file, the field and what to change."""

    def __init__(self, path: str | Path, field: str | None, problem: str) -> None:
        where = f"{path}" + (f", field `{field}`" if field else "")
        super().__init__(f"{where}: {problem}")
        self.path, self.field, self.problem = str(path), field, problem


def load_task_file(path: str | Path) -> Task:
    """Parse and validate one task YAML file."""
    path = Path(path)
    if not path.is_file():
        raise TaskError(path, None, "is not a file; a task is one YAML file (move or rename this entry)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise TaskError(path, None, f"is not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    except OSError as exc:
        raise TaskError(path, None, f"cannot be read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise TaskError(path, None, f"is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise TaskError(path, None, "must be a YAML mapping with keys " + ", ".join(REQUIRED))
    _check_keys(path, data, REQUIRED, OPTIONAL, "top level")
    for key in ("id", "entry_point", "prompt", "reference", "signature"):
        if key in data and not (isinstance(data[key], str) and data[key].strip()):
            raise TaskError(path, key, "must be a non-empty string")
    if not data["id"].replace("_", "").replace("-", "").replace("/", "").isalnum():
        raise TaskError(path, "id", "may use letters, digits, '_', '-' and '/' only")
    suites = _load_suites(path, data["suites"])
    extra = tuple(_string_list(path, data, "extra_entry_points"))
    _check_reference(path, data["reference"], (data["entry_point"], *extra))
    return Task(
        id=data["id"],
        entry_point=data["entry_point"],
        prompt=data["prompt"],
        reference=data["reference"],
        suites=suites,
        signature=data.get("signature", ""),
        tags=tuple(_string_list(path, data, "tags")),
        created=_load_date(path, data.get("created")),
        source=str(path),
        extra_entry_points=extra,
        edge_cases=_load_edge_cases(path, data.get("edge_cases", [])),
    )


def load_task_dir(directory: str | Path) -> list[Task]:
    """Load every `*.yaml` / `*.yml` task in a directory, sorted by file name; ids must be unique."""
    directory = Path(directory)
    if not directory.is_dir():
        raise TaskError(directory, None, "task set directory not found; set task_set.path to a directory of YAML tasks")
    files = sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])
    if not files:
        raise TaskError(directory, None, "contains no *.yaml task files")
    tasks, seen = [], {}
    for file in files:
        task = load_task_file(file)
        if task.id in seen:
            raise TaskError(
                file, "id", f"duplicate id {task.id!r} (also in {seen[task.id]}); give each task its own id"
            )
        seen[task.id] = file
        tasks.append(task)
    return tasks


def _check_keys(path: Path, data: dict, required, optional, where: str) -> None:
    for key in data:
        if key not in (*required, *optional):
            allowed = ", ".join((*required, *optional))
            raise TaskError(path, str(key), f"unknown field at {where}; allowed fields are: {allowed}")
    for key in required:
        if key not in data:
            raise TaskError(path, key, f"missing required field at {where}")


def _load_suites(path: Path, suites: Any) -> dict[str, str]:
    if not isinstance(suites, dict):
        raise TaskError(path, "suites", f"must be a mapping with keys among {', '.join(SUITES)}")
    _check_keys(path, suites, ("visible",), ("hidden", "properties"), "suites")
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
        _check_keys(path, item, ("name", "when"), (), field)
        for key in ("name", "when"):
            if not (isinstance(item[key], str) and item[key].strip()):
                raise TaskError(path, f"{field}.{key}", "must be a non-empty string")
        if item["name"] in names:
            raise TaskError(path, f"{field}.name", f"duplicate edge case {item['name']!r}; give each its own name")
        try:
            ast.parse(item["when"], mode="eval")
        except SyntaxError as exc:
            raise TaskError(path, f"{field}.when", f"is not a Python expression: {exc.msg}") from None
        names.add(item["name"])
        cases.append(EdgeCase(item["name"], item["when"]))
    return tuple(cases)


def _check_reference(path: Path, source: str, entry_points: tuple[str, ...]) -> None:
    tree = _parse(path, "reference", source)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for name in entry_points:
        if name not in defined:
            raise TaskError(path, "reference", f"does not define the entry point `{name}` at top level")


def _parse(path: Path, field: str, source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise TaskError(path, field, f"does not parse: {exc.msg} at line {exc.lineno} of that field") from None


def _string_list(path: Path, data: dict, key: str) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskError(path, key, "must be a list of strings")
    return value


def _load_date(path: Path, value: Any) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise TaskError(path, "created", f"{value!r} is not a date; write it as YYYY-MM-DD") from None
