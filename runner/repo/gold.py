"""The gold check of a repo task: its environment builds, its tests collect and run, FAIL_TO_PASS fail
before the gold patch, and with it every FAIL_TO_PASS and PASS_TO_PASS test passes.

Statuses (beside `ok`): env_build_failed, env_missing_module (with the modules), env_import_error,
no_tests_collected, fail_to_pass_already_pass, patch_failed, patch_forbidden, test_failed, timeout.
Each is a defect of the task or its environment, never of a model: such a task is excluded from scoring.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from runner.outcome import Outcome
from runner.repo.env import EnvError, Environments
from runner.repo.judge import run_tests
from runner.repo.patch import apply_answer
from runner.repo.verdict import repo_verdict, test_statuses
from runner.sandbox.repo_job import RepoRunResult
from runner.tasks.repo_task import RepoTask

if TYPE_CHECKING:
    from runner.sandbox.pool import WorkerPool

_MISSING = re.compile(r"No module named '([\w.]+)'")
_IMPORT_ERROR = re.compile(r"\bImportError\b|cannot import name")


def _texts(run: RepoRunResult) -> list[str]:
    texts = [str(m.get("msg", "")) for m in run.messages if m.get("k") in ("collect_error", "report")]
    return [*texts, run.output]


def _environment_problem(task: RepoTask, run: RepoRunResult) -> tuple[str, str, tuple[str, ...]] | None:
    """env_missing_module / env_import_error from a run's collection errors, reports and output; else None."""
    texts = _texts(run)
    own = {name.split("/", 1)[0] for name in task.files if "/" in name} | {n[:-3] for n in task.files if "/" not in n}
    missing = sorted({m.split(".")[0] for text in texts for m in _MISSING.findall(text)})
    foreign = tuple(m for m in missing if m not in own)
    if foreign:
        return "env_missing_module", "", foreign
    if missing:
        detail = f"the repo's own module(s) {', '.join(missing)} cannot be imported from its root"
        return "env_import_error", detail + " (flat package at the root, or pythonpath in its pytest config)", ()
    if any(_IMPORT_ERROR.search(text) for text in texts):
        first = next(t for t in texts if _IMPORT_ERROR.search(t))
        return "env_import_error", " ".join(first.split())[-300:], ()
    return None


def _collection_problem(task: RepoTask, run: RepoRunResult) -> tuple[str, str, tuple[str, ...]] | None:
    if run.timed_out:
        return "timeout", "the test run exceeded its time limit", ()
    problem = _environment_problem(task, run)
    if problem is not None:
        return problem
    collected = set()
    for message in run.messages:
        if message.get("k") == "collected" and isinstance(message.get("ids"), list):
            collected.update(message["ids"])
    missing = [node for node in task.demanded if node not in collected]
    if missing:
        what = "no tests collected" if not collected else "not collected"
        return "no_tests_collected", f"{what}: {', '.join(missing[:5])}", ()
    return None


def check_repo_task(task: RepoTask, pool: WorkerPool, envs: Environments, timeout_s: float = 60.0):
    """(status, detail, missing modules) of one repo task."""
    try:
        env = envs.ensure(task.requirements)
    except EnvError as exc:
        return "env_build_failed", str(exc), ()
    before = run_tests(task, dict(task.files), pool, env.python, timeout_s)
    if before.harness_error:
        return Outcome.HARNESS_ERROR.value, before.harness_error, ()
    problem = _collection_problem(task, before)
    if problem is not None:
        return problem
    statuses = test_statuses(task, before)
    already = [n for n in task.fail_to_pass if statuses[n].status == "passed"]
    if already:
        return "fail_to_pass_already_pass", "pass before the gold patch: " + ", ".join(already[:5]), ()
    broken = [n for n in task.pass_to_pass if statuses[n].status != "passed"]
    if broken:
        return "test_failed", "PASS_TO_PASS fail before the gold patch: " + ", ".join(broken[:5]), ()
    applied = apply_answer(task, task.gold_patch, "diff")
    if applied.files is None:
        return applied.outcome.value, f"gold.patch: {applied.detail}", ()
    after = run_tests(task, applied.files, pool, env.python, timeout_s)
    problem = _collection_problem(task, after)
    if problem is not None:
        return problem
    verdict = repo_verdict(task, after)
    if verdict.passed:
        return "ok", "", ()
    if verdict.outcome is Outcome.TIMEOUT:
        return "timeout", verdict.detail, ()
    return "test_failed", f"with the gold patch: {verdict.detail}", ()
