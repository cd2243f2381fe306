"""Load a repository task directory (`task.yaml`, `repo/`, `gold.patch`), with one-line TaskErrors."""

from __future__ import annotations

import os
import re
from pathlib import Path

from runner.tasks.fields import TaskError, check_id, check_keys, load_date, read_mapping, string_list
from runner.tasks.repo_task import RepoTask

REPO_REQUIRED = ("id", "problem_statement", "shown_files", "fail_to_pass")
REPO_OPTIONAL = ("kind", "pass_to_pass", "visible_tests", "requirements", "protected_paths", "test_timeout_s",
                 "tags", "created")  # fmt: skip
SKIPPED_DIRS = ("__pycache__", ".pytest_cache", ".git")
"""Directories under repo/ that are never part of a task (caches, a stray git directory)."""
PINNED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?==[A-Za-z0-9.!+_-]+")


def is_repo_task_dir(path: Path) -> bool:
    """A subdirectory of a task set that holds a repo task (it has a task.yaml)."""
    return path.is_dir() and (path / "task.yaml").is_file()


def load_repo_task(directory: str | Path) -> RepoTask:
    """Parse and validate one repo task directory."""
    directory = Path(directory)
    path = directory / "task.yaml"
    data = read_mapping(path, REPO_REQUIRED)
    check_keys(path, data, REPO_REQUIRED, REPO_OPTIONAL, "top level")
    if data.get("kind", "repo") != "repo":
        raise TaskError(path, "kind", f"is {data['kind']!r}; a task.yaml in a task directory is `kind: repo`")
    for key in ("id", "problem_statement"):
        if not (isinstance(data[key], str) and data[key].strip()):
            raise TaskError(path, key, "must be a non-empty string")
    check_id(path, data["id"])
    if data["id"] != directory.name:
        raise TaskError(path, "id", f"is {data['id']!r} but the directory is {directory.name!r}; make them equal")
    files = _repo_files(directory / "repo")
    gold = directory / "gold.patch"
    if not gold.is_file() or not gold.read_text(encoding="utf-8", errors="replace").strip():
        raise TaskError(gold, None, "is missing or empty; add the reference change as a unified diff (git diff)")
    shown = string_list(path, data, "shown_files")
    if not shown:
        raise TaskError(path, "shown_files", "is empty; list the files the model needs to see (paths under repo/)")
    for name in shown:
        if name not in files:
            raise TaskError(path, "shown_files", f"{name!r} is not a file under repo/; fix the path")
    fail_to_pass = _node_ids(path, data, "fail_to_pass", files)
    if not fail_to_pass:
        raise TaskError(path, "fail_to_pass", "is empty; list the node ids the gold patch makes pass")
    pass_to_pass = _node_ids(path, data, "pass_to_pass", files)
    visible = _node_ids(path, data, "visible_tests", files) if "visible_tests" in data else pass_to_pass
    for node in visible:
        if node not in (*fail_to_pass, *pass_to_pass):
            raise TaskError(path, "visible_tests", f"{node!r} is in neither fail_to_pass nor pass_to_pass")
    requirements = string_list(path, data, "requirements")
    for req in requirements:
        if not PINNED.fullmatch(req.strip()):
            raise TaskError(path, "requirements", f"{req!r} is not pinned; write it as name==version")
    protected = string_list(path, data, "protected_paths") if "protected_paths" in data else ["tests/"]
    timeout = data.get("test_timeout_s", 0.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0:
        raise TaskError(path, "test_timeout_s", "must be a number of seconds >= 0")
    return RepoTask(
        id=data["id"],
        problem_statement=data["problem_statement"],
        shown_files=tuple(shown),
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
        visible_tests=visible,
        files=files,
        gold_patch=gold.read_text(encoding="utf-8"),
        requirements=tuple(r.strip() for r in requirements),
        protected_paths=tuple(protected),
        test_timeout_s=float(timeout),
        tags=tuple(string_list(path, data, "tags")),
        created=load_date(path, data.get("created")),
        source=str(directory),
    )


def _repo_files(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        raise TaskError(root, None, "is missing; a repo task holds its project as plain files under repo/")
    files: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(names):
            full = Path(folder) / name
            if full.is_symlink() or not full.is_file():
                raise TaskError(full, None, "is a symlink or special file; repo/ may hold plain files only")
            if name.endswith(".pyc"):
                continue
            files[full.relative_to(root).as_posix()] = full.read_bytes()
    if not files:
        raise TaskError(root, None, "holds no files; put the project (and its tests) there")
    return files


def _node_ids(path: Path, data: dict, key: str, files: dict[str, bytes]) -> tuple[str, ...]:
    ids = string_list(path, data, key)
    for node in ids:
        file, sep, name = node.partition("::")
        if not sep or not name:
            raise TaskError(path, key, f"{node!r} is not a pytest node id (tests/test_x.py::test_name)")
        if file not in files:
            raise TaskError(path, key, f"{node!r}: {file!r} is not a file under repo/")
    if len(set(ids)) != len(ids):
        raise TaskError(path, key, "lists a node id twice")
    return tuple(ids)
