"""The interface every task kind implements, and what judging needs besides a task and its answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from runner.caches.content import content_key
from runner.caches.fingerprint import harness_fingerprint
from runner.config import Config, GateConfig, RepoConfig, gate_off

if TYPE_CHECKING:
    from runner.generation.extract import Extraction
    from runner.judging.gold_check import GoldResult
    from runner.outcome import Verdict


def verdict_key(task: Any, code: str | None, config: Mapping, limits: Mapping) -> str:
    """Cache key of a verdict: the code, the task's content (reference and suites), what of the config decides it
    (`TaskKind.config_key`), the limits and the harness."""
    return content_key(harness_fingerprint(), task.content_hash(), code, config, limits)


@dataclass(frozen=True)
class Bench:
    """What judging an answer needs besides the task: the sandbox's worker pool, the gate, the repo settings and
    environments, the CPU limits the references' gold-check times give, and the limits as a verdict's key holds them."""

    pool: Any  # runner.sandbox.workers.pool.WorkerPool (not imported: a kind is usable without the sandbox loaded)
    gate: GateConfig = field(default_factory=gate_off)
    repo: RepoConfig = field(default_factory=RepoConfig)
    envs: Any = None  # runner.repo.env.Environments, needed by repo tasks only
    cpu_limits: Mapping[str, float] = field(default_factory=dict)
    limits_key: Mapping[str, Any] = field(default_factory=dict)
    gold_repeats: int = 1  # how many times the gold check runs each reference (judging.repeats)


@runtime_checkable
class TaskKind(Protocol):
    """One kind of task. `name` is the `kind` its tasks carry; `self_contained` says the task holds its reference
    and suites as code (no repository), so re-scoring samples, the mutation audit and efficiency scoring apply."""

    name: ClassVar[str]
    self_contained: ClassVar[bool]

    def first_messages(self, cfg: Config, task: Any) -> list[dict]:
        """The chat messages of a sample's first attempt."""
        ...

    def repair_messages(self, cfg: Config, task: Any, code: str, feedback: str) -> list[dict]:
        """The messages of a repair attempt: the previous answer and the visible suites' feedback."""
        ...

    def extract(self, cfg: Config, task: Any, answer: str) -> Extraction:
        """The answer judged, cut out of the model's whole reply."""
        ...

    def judge(self, task: Any, code: str | None, bench: Bench) -> Verdict:
        """The verdict on one answer (blocking: it runs in the sandbox)."""
        ...

    def config_key(self, bench: Bench) -> dict:
        """What of the config decides this kind's verdicts (part of every verdict's and gold row's key)."""
        ...

    def verdict_key(self, task: Any, code: str | None, bench: Bench) -> str:
        """The cache key of the verdict on `code`."""
        ...

    def gold(self, task: Any, bench: Bench) -> GoldResult:
        """The gold check of one task: its reference must pass all it is judged by."""
        ...
