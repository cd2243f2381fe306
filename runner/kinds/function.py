"""The function kind: a prompt asking for one function, judged by the task's own pytest suites in the sandbox."""

from __future__ import annotations

from dataclasses import asdict
from typing import ClassVar

from runner.config import Config
from runner.generation.extract import Extraction, extract
from runner.generation.prompts import first_messages, repair_messages
from runner.generation.sanitize import sanitized
from runner.judging.gold_check import GoldResult, reference_result
from runner.judging.judge import judge
from runner.judging.reference_limits import with_cpu_limit
from runner.kinds.base import Bench, verdict_key
from runner.outcome import Verdict
from runner.tasks.model import Task


class FunctionKind:
    """A `runner.tasks.model.Task`: a function's prompt, its reference and its suites."""

    name: ClassVar[str] = "function"
    self_contained: ClassVar[bool] = True

    def first_messages(self, cfg: Config, task: Task) -> list[dict]:
        """The prompt set's task message for the function."""
        return first_messages(cfg.prompts, task)

    def repair_messages(self, cfg: Config, task: Task, code: str, feedback: str) -> list[dict]:
        """The prompt set's repair message with the previous code and the visible suites' feedback."""
        return repair_messages(cfg.prompts, task, code, feedback)

    def extract(self, cfg: Config, task: Task, answer: str) -> Extraction:
        """The code of the reply; a script-style prompt set's answer cut down to what the entry points use."""
        extraction = extract(answer, task.entry_point)
        if not cfg.prompts.sanitize:
            return extraction
        return sanitized(extraction, (task.entry_point, *task.extra_entry_points))

    def judge(self, task: Task, code: str | None, bench: Bench) -> Verdict:
        """Static checks and the gate, then every suite, under the task's reference-scaled CPU limit."""
        return judge(with_cpu_limit(task, bench.cpu_limits), code, bench.pool, bench.gate)

    def config_key(self, bench: Bench) -> dict:
        """The gate (profile and mode) decides a function task's verdict."""
        return asdict(bench.gate)

    def verdict_key(self, task: Task, code: str | None, bench: Bench) -> str:
        """The code, the task as judged (its CPU limit included), the gate, the limits and the harness."""
        return verdict_key(with_cpu_limit(task, bench.cpu_limits), code, self.config_key(bench), bench.limits_key)

    def gold(self, task: Task, bench: Bench) -> GoldResult:
        """The reference run as the candidate, through the gate, by all of its suites (`bench.gold_repeats` times)."""
        return reference_result(task, bench.pool, bench.gate, bench.gold_repeats)
