"""Helpers for the repo task tests: the fixture task set, a writable copy of it, environments shared by a session."""

from __future__ import annotations

import shutil
from pathlib import Path

from runner.repo.env import Environments
from runner.tasks.loader import load_task_dir

FIXTURE_SET = Path(__file__).resolve().parent / "fixtures" / "repo_tasks"
SHARED_ENVS = Path("/tmp/runner-test-repo-envs")
"""Environments made by the tests, kept between runs (readable by the sandbox uid, unlike /root)."""


def fixture_tasks() -> dict:
    """The fixture task set's tasks by id (two repo tasks and one function task)."""
    return {t.id: t for t in load_task_dir(FIXTURE_SET)}


def copy_set(tmp_path: Path) -> Path:
    """A writable copy of the fixture task set."""
    target = tmp_path / "tasks"
    shutil.copytree(FIXTURE_SET, target)
    return target


def environments() -> Environments:
    """The environments of the tests (built once per machine, then warm)."""
    return Environments(SHARED_ENVS)


def slug_patch(body: str, new_line: str = '    return "-".join(text.lower().split())') -> str:
    """A diff of textkit/slug.py whose new slugify returns `new_line`, with `body` before the function."""
    head = ["def slugify(text: str) -> str:", '    """Lower-case words joined by single hyphens."""']
    old = ['"""URL slugs."""', "", "", *head, '    return "-".join(text.lower().split(" "))']
    new = ['"""URL slugs."""', *body.splitlines(), "", "", *head, new_line]
    lines = ["--- a/textkit/slug.py", "+++ b/textkit/slug.py", f"@@ -1,{len(old)} +1,{len(new)} @@"]
    lines += [f"-{line}" for line in old] + [f"+{line}" for line in new]
    return "\n".join(lines) + "\n"
