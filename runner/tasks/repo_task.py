"""The repository task: a small project, an issue text, the tests it must turn green, and a gold patch."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import ClassVar

REPO_SUITES = ("visible", "hidden")
"""A repo task's results as suites: `visible` (its visible_tests, the only ones repair feedback shows) and
`hidden` (every other FAIL_TO_PASS / PASS_TO_PASS node id)."""


@dataclass(frozen=True)
class RepoTask:
    """A repository-level task as loaded from `<task set>/<id>/task.yaml`, `repo/` and `gold.patch`.

    `files` maps each path under `repo/` (POSIX, relative) to its bytes; `gold_patch` is a unified diff
    that `git apply` applies inside a copy of them. A candidate passes when every FAIL_TO_PASS and
    PASS_TO_PASS node id reports `passed`.
    """

    kind: ClassVar[str] = "repo"

    id: str
    problem_statement: str
    shown_files: tuple[str, ...]
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    files: Mapping[str, bytes]
    gold_patch: str
    visible_tests: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()
    protected_paths: tuple[str, ...] = ("tests/",)
    test_timeout_s: float = 0.0
    """Wall limit for one test run of this task (0: the config's repo.timeout_s)."""
    tags: tuple[str, ...] = ()
    created: date | None = None
    source: str = ""
    entry_point: str = field(default="", compare=False)
    """Unused (function tasks name their entry point here); kept so code common to both kinds can read it."""

    @property
    def demanded(self) -> tuple[str, ...]:
        """Every node id that must pass: FAIL_TO_PASS then PASS_TO_PASS, without repeats."""
        return tuple(dict.fromkeys((*self.fail_to_pass, *self.pass_to_pass)))

    @property
    def suites(self) -> dict[str, tuple[str, ...]]:
        """The node ids of each suite: `visible` (shown in repair feedback) and `hidden` (the rest)."""
        visible = tuple(i for i in self.demanded if i in self.visible_tests)
        return {"visible": visible, "hidden": tuple(i for i in self.demanded if i not in visible)}

    def content_hash(self) -> str:
        """Hash of everything that determines this task's verdicts: every field and every file's bytes."""
        payload = {
            "kind": self.kind,
            "id": self.id,
            "problem_statement": self.problem_statement,
            "shown_files": list(self.shown_files),
            "fail_to_pass": list(self.fail_to_pass),
            "pass_to_pass": list(self.pass_to_pass),
            "visible_tests": list(self.visible_tests),
            "requirements": list(self.requirements),
            "protected_paths": list(self.protected_paths),
            "test_timeout_s": self.test_timeout_s,
            "files": {p: hashlib.sha256(self.files[p]).hexdigest() for p in sorted(self.files)},
            "gold_patch": self.gold_patch,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
