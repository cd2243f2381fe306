"""The JSON schema of both task kinds, generated from the task model and the loaders' field lists.

    python -m runner.tasks.schema            # (re)write schemas/task.schema.json
    python -m runner.tasks.schema --check    # exit 1 if the committed file is out of date
    python -m runner.tasks.schema --help     # this usage, and nothing written

Each property's type comes from the `Task` / `RepoTask` field of the same name (str, tuple of str,
float, date); the fields' sets and which are required come from the loaders, so the schema accepts
exactly the keys the loaders accept (tests/test_task_schema.py keeps them in step). Task files name it
on their first line, `# yaml-language-server: $schema=<relative path>`, for editors to validate and complete.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import typing
from pathlib import Path

from runner.check_option import check_option
from runner.tasks import loader, repo_loader
from runner.tasks.model import SUITES, Task
from runner.tasks.repo_task import RepoTask

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "task.schema.json"
DESCRIPTIONS = {
    "kind": "function (a task file; the default) or repo (task.yaml of a task directory)",
    "id": "unique in the task set; letters, digits, _ - /",
    "entry_point": "the function the candidate must define",
    "signature": "the exact signature shown to the model",
    "prompt": "the specification shown to the model",
    "reference": "a correct solution; the gold check runs it against every suite",
    "suites": "pytest test functions: visible (may reach repair prompts), hidden, properties (hypothesis)",
    "extra_entry_points": "further functions the candidate must define",
    "tags": "free labels (bugfix, feature, refactor, ...)",
    "created": "YYYY-MM-DD; task_set.created_after keeps newer tasks only",
    "problem_statement": "the issue as a user would file it; never the solution",
    "shown_files": "paths under repo/ shown to the model in full",
    "fail_to_pass": "pytest node ids that fail before gold.patch and pass after",
    "pass_to_pass": "node ids that pass before and after",
    "visible_tests": "node ids whose results may appear in repair feedback (default: pass_to_pass)",
    "requirements": "pinned (name==version) test-only requirements",
    "protected_paths": "paths an answer may not change (default [tests/]); conftest.py never",
    "test_timeout_s": "wall limit in seconds for one test run of this task (0: repo.timeout_s)",
    "edge_cases": "stated edge cases: {name, when: a Python expression over the arguments} (runner.audit)",
    "perf_inputs": "inputs that make cost visible (runner.efficiency): {args: [...]} or {generator: <source of "
    "generate(size) returning the argument list>, size: N}",
    "references": "further reference solutions of graded efficiency, slow to fast (runner.efficiency)",
}
_PATTERNS = {
    "id": r"^[A-Za-z0-9_/-]+$",
    "fail_to_pass": r"^[^:]+::.+$",
    "pass_to_pass": r"^[^:]+::.+$",
    "visible_tests": r"^[^:]+::.+$",
    "requirements": repo_loader.PINNED.pattern.join("^$"),
}


def _type_of(annotation) -> dict:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is str:
        return {"type": "string", "minLength": 1}
    if annotation is float:
        return {"type": "number", "minimum": 0}
    if origin is tuple and args[0] is str:
        return {"type": "array", "items": {"type": "string"}}
    if dt.date in args:
        return {"type": "string", "format": "date"}
    raise TypeError(f"no JSON schema type for {annotation!r}")


def _kind_schema(model: type, required: tuple[str, ...], optional: tuple[str, ...]) -> dict:
    hints = typing.get_type_hints(model)
    properties = {}
    for key in (*required, *optional):
        if key == "kind":
            spec: dict = {"enum": [model.kind]}
        elif key == "edge_cases":  # function tasks' declared edge cases (the seed review's loader field)
            text = {"type": "string", "minLength": 1}
            case = {"type": "object", "properties": {"name": text, "when": text}, "required": ["name", "when"],
                    "additionalProperties": False}  # fmt: skip
            spec = {"type": "array", "items": case}
        elif key == "perf_inputs":
            explicit = {"type": "object", "properties": {"args": {"type": "array"}}, "required": ["args"],
                        "additionalProperties": False}  # fmt: skip
            generated = {"type": "object", "properties": {"generator": {"type": "string", "minLength": 1},
                         "size": {"type": "integer", "minimum": 0}}, "required": ["generator", "size"],
                         "additionalProperties": False}  # fmt: skip
            spec = {"type": "array", "items": {"oneOf": [explicit, generated]}}
        elif key == "suites":
            suite = {"type": "string", "minLength": 1}
            spec = {"type": "object", "properties": dict.fromkeys(SUITES, suite), "required": ["visible"],
                    "additionalProperties": False}  # fmt: skip
        else:
            spec = _type_of(hints[key])
        if key in _PATTERNS:
            target = spec["items"] if spec.get("type") == "array" else spec
            target["pattern"] = _PATTERNS[key]
        properties[key] = {"description": DESCRIPTIONS[key], **spec}
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def task_schema() -> dict:
    """The schema: a function task (a *.yaml file) or a repo task (a task directory's task.yaml)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "runner task",
        "description": "A task of a runner task set (README: Adding a task, Repository tasks).",
        "oneOf": [{"$ref": "#/$defs/function"}, {"$ref": "#/$defs/repo"}],
        "$defs": {
            "function": _kind_schema(Task, loader.REQUIRED, loader.OPTIONAL),
            "repo": _kind_schema(RepoTask, repo_loader.REPO_REQUIRED, repo_loader.REPO_OPTIONAL),
        },
    }


def schema_text() -> str:
    """The schema file's content."""
    return json.dumps(task_schema(), indent=2) + "\n"


USAGE = """usage: python -m runner.tasks.schema [--check]

Write the JSON schema of task files, generated from the task model, to schemas/task.schema.json.

options:
  --check     write nothing; exit 1 if the committed file differs from the generated schema
  -h, --help  show this help and exit"""


def main(argv: list[str]) -> int:
    """Write the schema file, or with --check say whether it is up to date; -h/--help prints USAGE."""
    answered = check_option(argv, USAGE)
    if answered is not None:
        return answered
    if "--check" in argv:
        current = SCHEMA_PATH.read_text() if SCHEMA_PATH.exists() else ""
        if current != schema_text():
            print(f"{SCHEMA_PATH} is out of date; run python -m runner.tasks.schema", file=sys.stderr)
            return 1
        print(f"{SCHEMA_PATH} is up to date")
        return 0
    SCHEMA_PATH.parent.mkdir(exist_ok=True)
    SCHEMA_PATH.write_text(schema_text())
    print(f"wrote {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
