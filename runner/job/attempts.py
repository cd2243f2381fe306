"""The experiment loop: for each task and sample, generate, extract, judge, repair; stream records.

Generations run concurrently up to `backend.max_concurrency` per server (of `backend.base_url`) and
overlap with test runs in the worker pool. Generations and verdicts are cached by content hash, so a
killed job re-run with the same command resumes without asking the model again and produces identical
records.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from runner.caches.content import Cache, content_key
from runner.config import Config
from runner.efficiency.cost import Efficiency
from runner.generation.backends.base import Backend, BackendError, Generation, GenerationOptions
from runner.generation.backends.server_pool import server_urls
from runner.generation.extract import Extraction
from runner.generation.prompts import answer_text
from runner.job.progress import Progress
from runner.judging.judge import feedback_for_repair, repair_allowed
from runner.kinds.registry import kind_of
from runner.outcome import Outcome, Verdict, verdict_from_dict, verdict_to_dict
from runner.records import AttemptRecord
from runner.tasks.model import Task
from runner.tasks.repo_task import RepoTask

JudgeFn = Callable[[Task | RepoTask, str | None], Verdict]


def sample_seed(job_seed: int, sample: int) -> int:
    """Seed of one sample: the job seed itself for sample 0, a hash-derived seed for the others."""
    if sample == 0:
        return job_seed
    digest = hashlib.sha256(f"{job_seed}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class AttemptWriter:
    """Appends records to attempts.jsonl as they finish; each line is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.records: list[AttemptRecord] = []

    def write(self, record: AttemptRecord) -> None:
        with self._lock, self.path.open("a") as handle:
            handle.write(record.to_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
            self.records.append(record)


@dataclasses.dataclass
class Experiment:
    """One job's generation and judging loop. `judge` runs a candidate's tests (blocking)."""

    cfg: Config
    backend: Backend
    model_identity: dict
    judge: JudgeFn
    judge_key: Callable[[Task, str | None], str]
    cache: Cache
    writer: AttemptWriter
    judge_slots: int = 2
    excluded: Awaitable[set[str]] | None = None
    """Resolves to the ids of tasks excluded by the gold check; judging waits for it, generation does not."""
    on_progress: Callable[[int, int, int], None] | None = None
    """Called with (samples done, passed, total) after each sample (e.g. runner.tracking.runs.JobRun.progress)."""
    measure: Callable[[Task, str], Efficiency] | None = None
    """Measures a final attempt that passed (runner.efficiency.cached_measure, blocking); None: efficiency off."""

    async def run(self, tasks: list[Task | RepoTask]) -> list[AttemptRecord]:
        """Run every sample of every task; returns the records in (task, sample, attempt) order."""
        n = self.cfg.sampling.n
        servers = max(1, len(server_urls(self.cfg.backend)))  # a ServerPool keeps each server to its share
        self._gen_slots = asyncio.Semaphore(max(1, self.cfg.backend.max_concurrency) * servers)
        self._judge_slots = asyncio.Semaphore(max(1, self.judge_slots))
        self._progress = Progress(len(tasks) * n, enabled=self.cfg.progress)
        await asyncio.gather(*(self._run_sample(task, s) for task in tasks for s in range(n)))
        return sorted(self.writer.records, key=lambda r: (r.task_id, r.sample, r.attempt))

    def _advance(self, passed: bool) -> None:
        progress = self._progress
        progress.advance(passed)
        if self.on_progress is not None:
            self.on_progress(progress.done, progress.passed, progress.total)

    def _options(self, seed: int) -> GenerationOptions:
        s, m, b = self.cfg.sampling, self.cfg.model, self.cfg.backend
        return GenerationOptions(
            temperature=s.temperature,
            top_p=s.top_p,
            seed=seed,
            num_ctx=m.num_ctx,
            num_predict=s.num_predict,
            stop=(*s.stop, *getattr(self.cfg.prompts, "stop", ())),  # the prompt set's own stop sequences
            think=m.think,
            keep_alive=b.keep_alive if b.name == "ollama" else None,
        )

    async def _run_sample(self, task: Task, sample: int) -> None:
        seed = sample_seed(self.cfg.seed, sample)
        options = self._options(seed)
        kind = kind_of(task)
        messages = kind.first_messages(self.cfg, task)
        budget = self.cfg.repair.max_repairs
        for attempt in range(budget + 1):
            generation, error = await self._generate(messages, options)
            base = dict(
                task_id=task.id, sample=sample, attempt=attempt, seed=seed, model=self.cfg.model.name,
                messages=messages, options=dataclasses.asdict(options),
            )  # fmt: skip
            if error is not None:
                self.writer.write(
                    AttemptRecord(
                        **base,
                        response="",
                        code=None,
                        outcome=Outcome.BACKEND_ERROR,
                        final=True,
                        detail=str(error),
                    )
                )
                self._advance(False)
                return
            if self.excluded is not None and task.id in await self.excluded:
                self._advance(False)
                return
            extraction = kind.extract(self.cfg, task, answer_text(messages, generation.text))
            code = extraction.code
            verdict = await self._judge(task, code)
            rejudged = await self._rejudge(task, code)
            final = attempt == budget or not repair_allowed(verdict)
            efficiency = await self._measure(task, code) if final and verdict.passed else None
            self.writer.write(_record(base, generation, extraction, verdict, final, efficiency, rejudged))
            if final:
                self._advance(verdict.passed)
                return
            feedback = feedback_for_repair(verdict, self.cfg.repair.feedback_max_chars)
            messages = kind.repair_messages(self.cfg, task, code or "", feedback)

    async def _generate(self, messages, options) -> tuple[Generation | None, BackendError | None]:
        key = content_key(self.model_identity, messages, dataclasses.asdict(options))
        cached = self.cache.get("generation", key)
        if cached is not None:
            return Generation(**cached), None
        async with self._gen_slots:
            try:
                generation = await self.backend.generate(messages, options)
            except BackendError as exc:
                return None, exc
        return Generation(**self.cache.put("generation", key, dataclasses.asdict(generation))), None

    async def _measure(self, task: Task | RepoTask, code: str) -> Efficiency | None:
        """The efficiency of a passing answer, after its verdict (which it never changes); None when off."""
        if self.measure is None or not kind_of(task).self_contained:
            return None
        async with self._judge_slots:  # it runs in the sandbox's workers, like a verdict
            return await asyncio.to_thread(self.measure, task, code)

    async def _rejudge(self, task: Task, code: str | None) -> list[str]:
        """The outcomes of judging the candidate `judging.repeats - 1` more times (each run cached on its own, so a
        distinct candidate is judged that often once, whichever sample gave it)."""
        return [(await self._judge(task, code, run)).outcome.value for run in range(1, self.cfg.judging.repeats)]

    async def _judge(self, task: Task, code: str | None, run: int = 0) -> Verdict:
        key = self.judge_key(task, code) if run == 0 else content_key(self.judge_key(task, code), "repeat", run)
        cached = self.cache.get("verdict", key)
        if cached is not None:
            return verdict_from_dict(cached)
        async with self._judge_slots:
            verdict = await asyncio.to_thread(self.judge, task, code)
        if verdict.outcome.scored:  # another job may have stored this key first: its verdict counts
            return verdict_from_dict(self.cache.put("verdict", key, verdict_to_dict(verdict)))
        return verdict


def _record(base: dict, generation: Generation, extraction: Extraction, verdict: Verdict, final: bool,
            efficiency: Efficiency | None = None, rejudged: list[str] | None = None) -> AttemptRecord:  # fmt: skip
    tests = {
        name: [{"name": t.name, "status": t.status, "message": t.message} for t in suite.tests]
        for name, suite in verdict.suites.items()
    }
    return AttemptRecord(
        **base,
        response=generation.text,
        code=extraction.code,
        outcome=verdict.outcome,
        final=final,
        suites=verdict.suite_passed(),
        tests=tests,
        detail=verdict.detail,
        rule=verdict.rule,
        line=verdict.line,
        finish_reason=generation.finish_reason,
        prompt_tokens=generation.prompt_tokens,
        completion_tokens=generation.completion_tokens,
        generation_s=round(generation.duration_s, 4),
        server=generation.server,
        test_s=round(verdict.duration_s, 4),
        violations=[dict(v) for v in verdict.violations],
        extraction=list(extraction.changes),
        efficiency=None if efficiency is None else efficiency.to_record(),
        rejudged=list(rejudged or []),
    )
