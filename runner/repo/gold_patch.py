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
from runner.repo.patch import GitMissing, apply_answer
from runner.repo.run_answer import run_tests
from runner.repo.statuses import repo_verdict, test_statuses
from runner.sandbox.repo_job import RepoRunResult
from runner.tasks.repo_task import RepoTask

if TYPE_CHECKING:
    from runner.sandbox.workers.pool import WorkerPool

_MISSING = re.compile(r"No module named '([\w.]+)'")
_IMPORT_ERROR = re.compile(r"\bImportError\b|cannot import name")


def _texts(run: RepoRunResult) -> list[str]:
    texts = [str(m.get("msg", "")) for m in run.messages if m.get("k") in ("collect_error", "report")]
    return [*texts, run.output]


def _environment_problem(task: RepoTask, run: RepoRunResult, own_imports: bool = True):
    """env_missing_module / env_import_error from a run's collection errors, reports and output; else None.

    With `own_imports=False` (the run before the gold patch, where a test may import what the patch adds)
    only modules from outside the repo count.
    """
    texts = _texts(run)
    own = {part.removesuffix(".py") for name in task.files for part in name.split("/")}  # incl. src/<pkg>
    missing = sorted({m.split(".")[0] for text in texts for m in _MISSING.findall(text)})
    foreign = tuple(m for m in missing if m not in own)
    if foreign:
        return "env_missing_module", "", foreign
    if not own_imports:
        return None
    if missing:
        detail = f"the repo's own module(s) {', '.join(missing)} cannot be imported from its root"
        return "env_import_error", detail + " (flat package at the root, or pythonpath in its pytest config)", ()
    first = next((t for t in texts if _IMPORT_ERROR.search(t)), None)
    return ("env_import_error", " ".join(first.split())[-300:], ()) if first is not None else None


def _not_collected(task: RepoTask, run: RepoRunResult) -> list[str]:
    collected = set()
    for message in run.messages:
        if message.get("k") == "collected" and isinstance(message.get("ids"), list):
            collected.update(message["ids"])
    return [node for node in task.demanded if node not in collected]


def _before(task: RepoTask, run: RepoRunResult):
    """What the run before the gold patch shows wrong: FAIL_TO_PASS must not pass, PASS_TO_PASS must."""
    if run.timed_out:
        return "timeout", "the test run before the gold patch exceeded its time limit", ()
    problem = _environment_problem(task, run, own_imports=False)
    if problem is not None:
        return problem
    errors = [m for m in run.messages if m.get("k") == "collect_error"]
    missing = _not_collected(task, run)
    if missing and not errors:
        return "no_tests_collected", "not collected: " + ", ".join(missing[:5]), ()
    statuses = test_statuses(task, run)
    already = [n for n in task.fail_to_pass if statuses[n].status == "passed"]
    if already:
        return "fail_to_pass_already_pass", "pass before the gold patch: " + ", ".join(already[:5]), ()
    broken = [n for n in task.pass_to_pass if statuses[n].status != "passed"]
    if broken:
        problem = _environment_problem(task, run)
        if problem is not None:
            return problem
        return "test_failed", "PASS_TO_PASS fail before the gold patch: " + ", ".join(broken[:5]), ()
    return None


def _after(task: RepoTask, run: RepoRunResult):
    """What the run with the gold patch shows wrong: every demanded node id must pass."""
    if run.timed_out:
        return "timeout", "the test run with the gold patch exceeded its time limit", ()
    problem = _environment_problem(task, run)
    if problem is not None:
        return problem
    missing = _not_collected(task, run)
    if missing:
        return "no_tests_collected", "not collected: " + ", ".join(missing[:5]), ()
    verdict = repo_verdict(task, run)
    if verdict.passed:
        return None
    if verdict.outcome is Outcome.TIMEOUT:
        return "timeout", verdict.detail, ()
    return "test_failed", f"with the gold patch: {verdict.detail}", ()


def check_repo_task(task: RepoTask, pool: WorkerPool, envs: Environments, timeout_s: float = 60.0):
    """(status, detail, missing modules) of one repo task; status `ok` when all is well."""
    try:
        env = envs.ensure(task.requirements)
    except EnvError as exc:
        return "env_build_failed", str(exc), ()
    before = run_tests(task, dict(task.files), pool, env.python, timeout_s)
    if before.harness_error:
        return Outcome.HARNESS_ERROR.value, before.harness_error, ()
    problem = _before(task, before)
    if problem is not None:
        return problem
    try:
        applied = apply_answer(task, task.gold_patch, "diff")
    except GitMissing as exc:
        return Outcome.HARNESS_ERROR.value, str(exc), ()
    if applied.files is None:
        return applied.outcome.value, f"gold.patch: {applied.detail}", ()
    after = run_tests(task, applied.files, pool, env.python, timeout_s)
    if after.harness_error:
        return Outcome.HARNESS_ERROR.value, after.harness_error, ()
    return _after(task, after) or ("ok", "", ())
