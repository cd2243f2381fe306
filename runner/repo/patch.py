"""A model's answer applied to a fresh copy of a repo task: `git apply` for a diff, or whole files.

The result is the copy's files (what the sandbox runs) or the outcome that stops it: `patch_failed`
(no answer, it does not apply, or it changes nothing) or `patch_forbidden` (it changes a protected path,
a `conftest.py` or a pytest configuration file anywhere, or leaves anything but plain files). What the
answer changed is found by comparing the copy with the task's files, not by believing the diff's headers.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from runner.outcome import Outcome
from runner.tasks.repo_task import RepoTask

TEST_CONFIG_FILES = ("conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
"""Files that change how pytest collects or reports: never changed by an answer, wherever they are."""


class GitMissing(RuntimeError):
    """`git` is not on PATH: no diff can be applied (a fault of this machine, never of an answer)."""


@dataclass(frozen=True)
class Applied:
    """The copy's files after the answer (None if it was refused), or the outcome and why."""

    files: dict[str, bytes] | None
    outcome: Outcome | None = None
    detail: str = ""
    changed: tuple[str, ...] = ()


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _read_back(root: Path) -> tuple[dict[str, bytes], list[str]]:
    files, odd = {}, []
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            full = Path(folder) / name
            if full.is_symlink() or not (full.is_dir() or full.is_file()):
                odd.append(full.relative_to(root).as_posix())
        for name in names:
            full = Path(folder) / name
            if not full.is_symlink() and full.is_file():
                files[full.relative_to(root).as_posix()] = full.read_bytes()
    return files, odd


def _git_apply(root: Path, patch: str) -> str | None:
    """Apply `patch` inside `root`; None, or git's complaint."""
    patch_file = root.parent / "answer.patch"
    patch_file.write_text(patch if patch.endswith("\n") else patch + "\n", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CEILING_DIRECTORIES": str(root.parent), "LC_ALL": "C"}  # fmt: skip
    try:
        done = subprocess.run(["git", "apply", "--recount", "--whitespace=nowarn", str(patch_file)], cwd=root,
                              capture_output=True, text=True, timeout=60, env=env)  # fmt: skip
    except FileNotFoundError:
        raise GitMissing("git is not installed; repo tasks apply answers with `git apply` (install git)") from None
    except subprocess.TimeoutExpired:
        return "git apply did not finish within 60 s"
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    return "; ".join(lines[:3]) or f"git apply failed (exit code {done.returncode})"


def _safe_relative(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


def forbidden_reason(task: RepoTask, path: str) -> str | None:
    """Why an answer may not change `path`, or None."""
    if PurePosixPath(path).name in TEST_CONFIG_FILES:
        return f"{path} is test configuration"
    for protected in task.protected_paths:
        prefix = protected.rstrip("/")
        if path == prefix or path.startswith(prefix + "/"):
            return f"{path} is under the protected path {protected}"
    return None


def apply_answer(task: RepoTask, answer: str | None, mode: str = "diff") -> Applied:
    """The task's files with `answer` (a unified diff, or a JSON object of whole files) applied."""
    if answer is None or not answer.strip():
        return Applied(None, Outcome.PATCH_FAILED, f"no {'diff' if mode == 'diff' else 'file'} found in the response")
    with tempfile.TemporaryDirectory(prefix="runner-repo-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        _write(root, dict(task.files))
        if mode == "files":
            replacements = json.loads(answer)
            bad = [name for name in replacements if not _safe_relative(name)]
            if bad:
                return Applied(None, Outcome.PATCH_FORBIDDEN, f"not a path inside the repo: {bad[0]!r}")
            _write(root, {name: text.encode("utf-8") for name, text in replacements.items()})
        else:
            problem = _git_apply(root, answer)
            if problem is not None:
                return Applied(None, Outcome.PATCH_FAILED, f"the patch does not apply: {problem}")
        files, odd = _read_back(root)
    if odd:
        return Applied(None, Outcome.PATCH_FORBIDDEN, f"the answer leaves a symlink or special file: {odd[0]}")
    changed = tuple(sorted(p for p in set(files) | set(task.files) if files.get(p) != task.files.get(p)))
    if not changed:
        return Applied(None, Outcome.PATCH_FAILED, "the answer changes no file")
    for path in changed:
        reason = forbidden_reason(task, path)
        if reason is not None:
            return Applied(None, Outcome.PATCH_FORBIDDEN, f"the answer changes {reason}", changed)
    return Applied(files, changed=changed)
