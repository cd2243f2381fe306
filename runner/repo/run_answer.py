"""The judge of a repo task: an answer -> one Verdict (apply to a fresh copy, then the sandboxed tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.outcome import Outcome, Verdict
from runner.repo.env import EnvError, Environments
from runner.repo.patch import GitMissing, apply_answer
from runner.repo.statuses import repo_verdict
from runner.sandbox.repo_job import RepoRun, RepoRunResult
from runner.tasks.repo_task import RepoTask

if TYPE_CHECKING:
    from runner.sandbox.workers.pool import WorkerPool


def run_tests(task: RepoTask, files: dict[str, bytes], pool: WorkerPool, python: str,
              timeout_s: float) -> RepoRunResult:  # fmt: skip
    """One sandboxed test run of the task's demanded node ids on `files`; a run that timed out runs once more."""
    job = RepoRun(files=files, python=python, node_ids=task.demanded, timeout_s=task.test_timeout_s or timeout_s)
    run = pool.run_repo(job)
    if run.timed_out:  # as for function tasks: a loaded machine slows passes down
        run = pool.run_repo(job)
    return run


def judge_repo(task: RepoTask, answer: str | None, pool: WorkerPool, envs: Environments, mode: str = "diff",
               timeout_s: float = 60.0) -> Verdict:  # fmt: skip
    """Judge one answer (a diff, or the JSON of whole files in `files` mode) to a repo task."""
    try:
        applied = apply_answer(task, answer, mode)
    except GitMissing as exc:
        return Verdict(Outcome.HARNESS_ERROR, detail=str(exc))
    if applied.files is None:
        return Verdict(applied.outcome, detail=applied.detail)
    try:
        env = envs.ensure(task.requirements)
    except EnvError as exc:
        return Verdict(Outcome.HARNESS_ERROR, detail=f"the task's environment: {exc}")
    return repo_verdict(task, run_tests(task, applied.files, pool, env.python, timeout_s))
