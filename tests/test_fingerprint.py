"""Verdict and gold cache keys follow the harness's own code: an edited source never reuses an old verdict."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import runner.caches.fingerprint as fingerprint
from runner.caches.content import Cache
from runner.kinds.base import verdict_key
from runner.tasks.model import Task
from tests.conftest import typed_test_config

PACKAGE = fingerprint.PACKAGE_ROOT
TASK = Task(id="add", entry_point="add", prompt="Add.", reference="def add(a, b):\n    return a + b\n",
            suites={"visible": "def test_v():\n    assert add(1, 2) == 3\n"})  # fmt: skip


@pytest.fixture
def harness_copy(tmp_path, monkeypatch):
    """A copy of the package that the fingerprint is pointed at."""
    copy = tmp_path / "runner"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "PACKAGE_ROOT", copy)
    return copy


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# a change that could change a verdict\n")
    fingerprint.fingerprint_of.cache_clear()


def test_an_edited_judging_source_makes_the_cached_verdict_unreachable(harness_copy, tmp_path):
    cache = Cache(tmp_path / "cache")
    before = verdict_key(TASK, "def add(a, b):\n    return a + b\n", {}, {})
    cache.put("verdict", before, {"outcome": "passed"})
    assert cache.get("verdict", before) is not None

    _edit(harness_copy / "judging" / "judge.py")
    after = verdict_key(TASK, "def add(a, b):\n    return a + b\n", {}, {})
    assert after != before and cache.get("verdict", after) is None


def test_every_verdict_relevant_source_counts_and_reporting_does_not(harness_copy):
    sources = {str(p.relative_to(harness_copy)) for p in fingerprint.harness_sources(harness_copy)}
    assert {"judging/judge.py", "tasks/importers.py", "suites/hypothesis_profile.py", "caches/content.py"} <= sources
    first = fingerprint.harness_fingerprint()
    _edit(harness_copy / "report.py")
    assert fingerprint.harness_fingerprint() == first
    _edit(harness_copy / "tasks" / "importers.py")
    assert fingerprint.harness_fingerprint() != first


def test_the_pytest_and_hypothesis_versions_are_part_of_it(monkeypatch):
    before = fingerprint.fingerprint_of.__wrapped__(PACKAGE)
    monkeypatch.setattr(fingerprint, "version", lambda name: "0.0-other")
    assert fingerprint.fingerprint_of.__wrapped__(PACKAGE) != before


def test_the_gold_check_runs_again_after_a_harness_change(harness_copy, tmp_path, monkeypatch):
    from runner.job import run as job
    from runner.judging.gold_check import GoldResult
    from runner.kinds.function import FunctionKind
    from runner.sandbox.confine.limits import Limits

    runs = []  # the gold check itself is tested in test_gold.py; here only whether its cached rows are reused
    monkeypatch.setattr(FunctionKind, "gold", lambda self, task, bench: runs.append(1) or GoldResult(task.id, "ok"))
    cfg, cache = typed_test_config(["gold.enabled=true"]), Cache(tmp_path / "cache")
    for _ in range(2):
        job._gold_gate(cfg, [TASK], None, Limits(), cache, tmp_path)
    assert runs == [1]
    _edit(harness_copy / "sandbox" / "workers" / "pool.py")
    job._gold_gate(cfg, [TASK], None, Limits(), cache, tmp_path)
    assert runs == [1, 1]


def test_a_jobs_gold_rows_are_reused_by_a_subset_of_a_mixed_set(tmp_path, monkeypatch):
    from runner.job import run as job
    from runner.judging.gold_check import GoldResult
    from runner.kinds.function import FunctionKind
    from runner.kinds.repo import RepoKind
    from runner.sandbox.confine.limits import Limits
    from runner.tasks.repo_task import RepoTask

    repo_task = RepoTask(id="fix", problem_statement="Fix it.", shown_files=(), fail_to_pass=("tests/t.py::a",),
                         pass_to_pass=(), files={"tests/t.py": b""}, gold_patch="")  # fmt: skip
    runs = []  # each task's row is keyed by its own kind's config, not by the kinds the whole set holds
    for kind in (FunctionKind, RepoKind):
        monkeypatch.setattr(kind, "gold", lambda self, task, bench: runs.append(task.id) or GoldResult(task.id, "ok"))
    cfg, cache = typed_test_config(["gold.enabled=true"]), Cache(tmp_path / "cache")
    job._gold_gate(cfg, [TASK, repo_task], None, Limits(), cache, tmp_path)
    job._gold_gate(cfg, [TASK], None, Limits(), cache, tmp_path)
    job._gold_gate(cfg, [repo_task], None, Limits(), cache, tmp_path)
    assert runs == ["add", "fix"]
