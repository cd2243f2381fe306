"""The sandboxed pytest harness: a pool of warm workers that run a candidate's suites in confinement.

`WorkerPool.run(job)` writes the job's files into a fresh directory the candidate cannot change,
runs all its suites in one forked, confined child of a warm worker (one pytest session that collects
every suite file before any candidate code runs) and returns one `SuiteResult` per suite,
judged by the trusted worker from a verdict channel the candidate cannot forge by ordinary means
(see runner.sandbox.child.pytest_child and runner.sandbox.workers.worker). What isolation was actually in
force is part of every result.
"""

from __future__ import annotations

import select
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass

from runner.outcome import Outcome, SuiteResult
from runner.sandbox.confine.limits import Limits
from runner.sandbox.cost_job import CostRun, CostRunResult
from runner.sandbox.repo_job import RepoRun, RepoRunResult
from runner.sandbox.sandbox_job import SandboxJob
from runner.sandbox.workers.handoff import Handoff
from runner.sandbox.workers.pool_worker import PoolWorker, WorkerDied, start_zygote
from runner.sandbox.workers.zygote import EarlyZygote

__all__ = ["EarlyZygote", "Limits", "SandboxJob", "SandboxResult", "WorkerPool", "WorkerDied"]


@dataclass(frozen=True)
class SandboxResult:
    """The judged suites of one job, the isolation actually in force, the capped output, the time taken."""

    suites: dict[str, SuiteResult]
    isolation: dict[str, bool]
    output: str
    duration_s: float


def _close_all(workers: list[PoolWorker], zygotes: list[subprocess.Popen], kill: bool = False) -> None:
    if kill:  # an interrupted job: the jobs in flight are discarded, so nothing is worth waiting for
        for worker in workers:
            worker.kill()
    for worker in workers:  # every worker sees the end of its input first, so they all finish at once
        try:
            worker.requests.close()
        except OSError:
            pass
    for worker in workers:
        worker.close()
    for zygote in zygotes:
        try:
            zygote.wait(timeout=10)
        except subprocess.TimeoutExpired:
            zygote.kill()
            zygote.wait()


class WorkerPool:
    """A fixed number of warm worker processes; `run` is blocking and thread-safe.

    A worker that dies is replaced; the job it was running is retried once on the replacement and
    otherwise reported as HARNESS_ERROR for every suite.
    """

    def __init__(self, workers: int = 2, limits: Limits = Limits(), wait: bool = True,  # noqa: B008
                 zygote: EarlyZygote | None = None) -> None:  # fmt: skip
        """Start the worker processes; with `wait=False` return at once and let them warm up meanwhile.

        Either way `run` (or `wait_ready`) waits for the warm-up; a worker that cannot start raises
        WorkerDied there (or here, with `wait=True`). `zygote`: an EarlyZygote to fork the workers from.
        """
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.limits = limits
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        zygote, self._all = start_zygote(limits, workers, zygote)
        self._zygotes = [zygote]
        self._idle: Handoff[PoolWorker | None] = Handoff()  # first come, first served; None: the pool is closed
        self._busy: set[PoolWorker] = set()  # workers a `_call` owns: it, not `close`, closes their pipes
        self._closed = False
        self._isolation: dict[str, bool] | None = None
        self._finalizer = weakref.finalize(self, _close_all, self._all, self._zygotes)
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Block until every worker has warmed up (raises WorkerDied, and closes the pool, if one cannot)."""
        with self._start_lock:
            if self._isolation is not None:
                return
            with self._lock:
                if self._closed:
                    raise WorkerDied("the worker pool is closed")
                warming = list(self._all)
                self._busy.update(warming)  # read from here: `close` leaves their pipes to `_release`
            try:
                hellos = [w.wait_ready() for w in warming]
            except WorkerDied:
                with self._lock:
                    self._closed = True
                for worker in warming:
                    self._release(worker)
                self.close()
                raise
            self._isolation = _all_true(h["isolation"] for h in hellos)
            for worker in warming:
                self._release(worker)

    def warm(self) -> bool:
        """True once every worker has warmed up (its hello has arrived); never blocks."""
        if self._isolation is not None:
            return True
        pending = [w.reply_fd for w in self._all if w.hello is None]
        return not pending or len(select.select(pending, [], [], 0)[0]) == len(pending)

    @property
    def isolation(self) -> dict[str, bool]:
        """Protections in force for every sandboxed child of this pool (probed at start-up)."""
        self.wait_ready()
        return dict(self._isolation)

    def run(self, job: SandboxJob) -> SandboxResult:
        """Run the job's suites in one worker and return the judged result."""
        start = time.monotonic()
        reply = self._call(job)
        if isinstance(reply, WorkerDied):
            return self._harness_error(job, f"the sandbox worker died twice: {reply}", start)
        return SandboxResult(*reply)

    def run_repo(self, job: RepoRun) -> RepoRunResult:
        """Run a repo task's tests in one worker; the result holds what was observed, for the judge."""
        reply = self._call(job)
        if isinstance(reply, WorkerDied):
            return RepoRunResult(harness_error=f"the sandbox worker died twice: {reply}", isolation=self.isolation)
        return reply

    def run_cost(self, job: CostRun) -> CostRunResult | WorkerDied:
        """Run a cost run (runner.sandbox.cost_run) in one worker: its result, or the WorkerDied if two workers died."""
        return self._call(job)

    def _call(self, job: SandboxJob | RepoRun | CostRun):
        """The reply of a worker to `job`, retried once on a fresh worker; the WorkerDied if both died."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        self.wait_ready()
        worker = self._idle.get()
        with self._lock:
            if worker is None or self._closed:  # closed while waiting: `close` owns the worker taken
                self._idle.put(None)  # and the next caller waiting wakes too
                return WorkerDied("the worker pool is closed")
            self._busy.add(worker)
        try:
            for attempt in range(2):
                try:
                    return worker.call(job)
                except WorkerDied as err:
                    if self._closed:  # a closed pool starts no worker to run the job again
                        return err
                    worker = self._replace(worker)
                    if attempt == 1 or self._closed:
                        return err
        finally:
            self._release(worker)
        raise AssertionError("unreachable")

    def _release(self, worker: PoolWorker) -> None:
        """Give the worker back after a call; once the pool is closed, close it instead."""
        with self._lock:
            self._busy.discard(worker)
            closed = self._closed
            if not closed:
                self._idle.put(worker)
        if closed:
            worker.close()

    def _replace(self, dead: PoolWorker) -> PoolWorker:
        dead.kill()
        dead.close()  # its pipes too: they would stay open until garbage collection
        fresh = PoolWorker(self.limits)
        with self._lock:
            self._all[self._all.index(dead)] = fresh
            self._busy.discard(dead)
            self._busy.add(fresh)
        fresh.wait_ready()
        return fresh

    def _harness_error(self, job: SandboxJob, detail: str, start: float) -> SandboxResult:
        suites = {name: SuiteResult(name, Outcome.HARNESS_ERROR, (), detail) for name, _ in job.suites}
        return SandboxResult(suites, self.isolation, "", time.monotonic() - start)

    def close(self, kill: bool = False) -> None:
        """Stop every worker: once each has finished its job, or with `kill` at once (an interrupted job,
        whose jobs in flight then end as WorkerDied). Also called when the pool is used as a context manager."""
        with self._lock:
            self._closed = True
            busy = set(self._busy)
            others = [w for w in self._all if w not in busy]
            self._idle.put(None)  # wakes a caller waiting for a worker
        if not self._finalizer.detach():
            return  # closed already
        if kill:
            for worker in busy:  # their callers see the reply pipe end and close them (see `_release`)
                worker.signal_kill()
        _close_all(others, self._zygotes, kill=kill)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _all_true(dicts) -> dict[str, bool]:
    merged: dict[str, bool] = {}
    for d in dicts:
        for key, value in d.items():
            merged[key] = merged.get(key, True) and bool(value)
    return merged
