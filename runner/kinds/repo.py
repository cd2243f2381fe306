"""The repo kind: an issue in a repository, answered by a patch, judged by the repository's tests (runner.repo)."""

from __future__ import annotations

from dataclasses import asdict
from typing import ClassVar

from runner.config import Config
from runner.generation.extract import Extraction
from runner.judging.gold_check import GoldResult, missing_modules
from runner.kinds.base import Bench, verdict_key
from runner.outcome import Verdict
from runner.repo.extract import extract_answer
from runner.repo.prompts import repo_first_messages, repo_repair_messages
from runner.tasks.repo_task import RepoTask


class RepoKind:
    """A `runner.tasks.repo_task.RepoTask`: a repository, an issue, a gold patch and the tests it must turn."""

    name: ClassVar[str] = "repo"
    self_contained: ClassVar[bool] = False

    def first_messages(self, cfg: Config, task: RepoTask) -> list[dict]:
        """The issue and the files shown, asking for an answer in `repo.answer`'s format."""
        return repo_first_messages(cfg.prompts, task, cfg.repo.answer)

    def repair_messages(self, cfg: Config, task: RepoTask, code: str, feedback: str) -> list[dict]:
        """The previous answer and the visible tests' feedback."""
        return repo_repair_messages(cfg.prompts, task, cfg.repo.answer, code, feedback)

    def extract(self, cfg: Config, task: RepoTask, answer: str) -> Extraction:
        """The diff, or the whole files, of the reply."""
        return extract_answer(answer, cfg.repo.answer, task.shown_files)

    def judge(self, task: RepoTask, code: str | None, bench: Bench) -> Verdict:
        """The answer applied to a fresh copy of the repository, whose tests run in the sandbox."""
        from runner.repo.run_answer import judge_repo

        return judge_repo(task, code, bench.pool, bench.envs, bench.repo.answer, bench.repo.timeout_s)

    def config_key(self, bench: Bench) -> dict:
        """The repo settings that decide a verdict (not where the environments are kept)."""
        return {"repo": {k: v for k, v in asdict(bench.repo).items() if k != "env_dir"}}

    def verdict_key(self, task: RepoTask, code: str | None, bench: Bench) -> str:
        """The answer, the task, the repo settings, the limits and the harness."""
        return verdict_key(task, code, self.config_key(bench), bench.limits_key)

    def gold(self, task: RepoTask, bench: Bench) -> GoldResult:
        """The gold patch must turn the failing tests and keep the passing ones (runner.repo.gold_patch)."""
        from runner.repo.gold_patch import check_repo_task

        if bench.envs is None:
            raise ValueError("the gold check of a repo task needs its environments (Bench.envs)")
        status, detail, modules = check_repo_task(task, bench.pool, bench.envs, bench.repo.timeout_s)
        return missing_modules(task.id, modules) if modules else GoldResult(task.id, status, detail)
