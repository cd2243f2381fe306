"""The sandboxed pytest harness: a pool of warm workers that run a candidate's suites in confinement.

`WorkerPool.run(job)` writes the job's files into a fresh directory the candidate cannot change,
runs all its suites in one forked, confined child of a warm worker (one pytest session that collects
every suite file before any candidate code runs) and returns one `SuiteResult` per suite,
judged by the trusted worker from a verdict channel the candidate cannot forge by ordinary means
(see runner.sandbox.pytest_child and runner.sandbox.worker). What isolation was actually in
force is part of every result.
"""

from __future__ import annotations

import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass

from runner.outcome import Outcome, SuiteResult
from runner.sandbox.cost_job import CostRun, CostRunResult
from runner.sandbox.frames import write_frame
from runner.sandbox.limits import Limits
from runner.sandbox.repo_job import RepoRun, RepoRunResult
from runner.sandbox.sandbox_job import SandboxJob
from runner.sandbox.zygote import MAX_WORKERS, EarlyZygote, worker_command, worker_env

__all__ = ["EarlyZygote", "Limits", "SandboxJob", "SandboxResult", "WorkerPool", "WorkerDied"]

_STARTUP_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class SandboxResult:
    """The judged suites of one job, the isolation actually in force, the capped output, the time taken."""

    suites: dict[str, SuiteResult]
    isolation: dict[str, bool]
    output: str
    duration_s: float


class WorkerDied(RuntimeError):
    """A worker process ended or stopped answering."""


class _ForkedProcess:
    """A worker the pool's zygote forked: not the pool's child, so it is watched through a pidfd.

    Until the worker's hello names its pid, stopping it means stopping the whole zygote group.
    """

    def __init__(self, zygote: subprocess.Popen) -> None:
        self.zygote = zygote
        self.pid: int | None = None
        self.pidfd: int | None = None

    def attach(self, pid: int) -> None:
        """Watch the worker with this pid (from its hello)."""
        try:
            self.pidfd, self.pid = os.pidfd_open(pid), pid
        except OSError:
            self.pidfd = None

    def send_signal(self, sig: int) -> None:
        """Send a signal to the worker (once it has said hello)."""
        if self.pidfd is not None:
            signal.pidfd_send_signal(self.pidfd, sig)

    def poll(self) -> int | None:
        """None while running; -1 once it has ended (its exit status is the zygote's to collect)."""
        if self.pidfd is None:
            return self.zygote.poll()
        return -1 if select.select([self.pidfd], [], [], 0)[0] else None

    def kill(self) -> None:
        """SIGKILL the worker (or, before its hello, the zygote and every worker it forked)."""
        try:
            if self.pidfd is not None:
                self.send_signal(signal.SIGKILL)
            else:
                os.killpg(self.zygote.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def wait(self, timeout: float | None = None) -> None:
        """Wait until the worker has ended; raises subprocess.TimeoutExpired after `timeout` seconds."""
        if self.pidfd is None:
            self.zygote.wait(timeout)
        elif not select.select([self.pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired("worker", timeout)

    def release(self) -> None:
        """Close the pidfd (the worker has ended)."""
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class _Worker:
    """The pool's handle on one worker process: started on its own, or forked by the pool's zygote."""

    def __init__(self, limits: Limits, pipes: tuple[int, int] | None = None,
                 zygote: subprocess.Popen | None = None) -> None:  # fmt: skip
        """Start a worker process, or (with `pipes` = (request write end, reply read end)) adopt a forked one."""
        self.limits = limits
        self.hello: dict | None = None
        if pipes is None:
            self.proc = subprocess.Popen(
                worker_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=worker_env(),
                cwd="/",
            )
            self.requests, self.replies = self.proc.stdin, self.proc.stdout
            _send_limits(self.requests, limits)
        else:
            self.proc = _ForkedProcess(zygote)
            self.requests, self.replies = os.fdopen(pipes[0], "wb"), os.fdopen(pipes[1], "rb")
        self.reply_fd = self.replies.fileno()  # read with os.read: the buffered object is never read from
        self.closed = False

    def wait_ready(self) -> dict:
        """Block until the worker has warmed up; its hello says which isolation is in force."""
        if self.hello is None:
            hello = self._read(_STARTUP_TIMEOUT_S)
            if not isinstance(hello, dict) or not hello.get("ready"):
                self.kill()
                raise WorkerDied(f"worker failed to start: {hello!r}")
            if isinstance(self.proc, _ForkedProcess):
                self.proc.attach(hello["pid"])
            self.hello = hello
        return self.hello

    def _read(self, timeout: float):
        """The worker's next reply frame, read straight from the pipe with a deadline (no reader thread)."""
        deadline = time.monotonic() + timeout
        fd = self.reply_fd
        header = self._read_exactly(fd, 8, deadline, timeout)
        (size,) = struct.unpack("!Q", header)
        try:
            return pickle.loads(self._read_exactly(fd, size, deadline, timeout))
        except (pickle.UnpicklingError, EOFError, ValueError) as err:
            self.kill()
            raise WorkerDied(f"worker sent an unreadable reply: {err}") from err

    def _read_exactly(self, fd: int, size: int, deadline: float, timeout: float) -> bytes:
        chunks, missing = [], size
        while missing:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.kill()
                raise WorkerDied(f"worker gave no answer within {timeout:g} s")
            chunk = os.read(fd, missing)
            if not chunk:
                raise WorkerDied(f"worker exited (code {self.proc.poll()})")
            chunks.append(chunk)
            missing -= len(chunk)
        return b"".join(chunks)

    def call(self, job: SandboxJob | RepoRun | CostRun):
        """Send one job and wait for its result."""
        self.wait_ready()
        try:
            if isinstance(job, RepoRun | CostRun):
                write_frame(self.requests, job)
            else:
                write_frame(
                    self.requests,
                    (dict(job.files), tuple(tuple(s) for s in job.suites), job.time_limit_s, job.cpu_limit_s),
                )
        except (BrokenPipeError, OSError) as err:
            raise WorkerDied(f"worker is gone: {err}") from err
        if isinstance(job, RepoRun | CostRun):
            return self._read(job.timeout_s + 40.0)
        # Generous upper bound: every suite may run to its timeout (in one session, or one session each
        # when a suite imports the candidate eagerly and the shared session is abandoned), plus clean-up.
        budget = len(job.suites) * (max(self.limits.timeout_s, job.time_limit_s) + 10.0) + 30.0
        return self._read(budget)

    def kill(self) -> None:
        """Stop the worker process at once."""
        if self.closed:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def signal_kill(self) -> None:
        """SIGKILL the worker without waiting or touching its pipes: safe while another thread reads them,
        which then sees the reply pipe end (WorkerDied) and closes the worker itself."""
        if self.closed:
            return
        try:
            if self.proc.poll() is None:
                self.proc.kill()
        except OSError:
            pass

    def close(self) -> None:
        """Ask the worker to finish (end of its input), then make sure it has. Only the thread that owns
        the worker may call this (its pipes and pidfd are closed here); a second call does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            self.requests.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()
        self.replies.close()
        if isinstance(self.proc, _ForkedProcess):
            self.proc.release()


def _start_zygote(limits: Limits, count: int, early: EarlyZygote | None) -> tuple[subprocess.Popen, list[_Worker]]:
    """One warm-up process that forks `count` workers, each talking to the pool over its own two pipes."""
    if count > MAX_WORKERS:
        raise ValueError(f"at most {MAX_WORKERS} workers")
    ours, theirs = [], []
    for _ in range(count):
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        ours.append((request_w, reply_r))
        theirs.append((request_r, reply_w))
    if early is not None:
        try:
            return early.start(limits, [fd for pair in theirs for fd in pair]), [
                _Worker(limits, pipes, early.proc) for pipes in ours
            ]
        finally:
            for fd in [fd for pair in theirs for fd in pair]:
                os.close(fd)
    try:
        zygote = subprocess.Popen(
            worker_command("--zygote", *(f"{r},{w}" for r, w in theirs)),
            stdin=subprocess.PIPE,
            env=worker_env(),
            cwd="/",
            pass_fds=[fd for pair in theirs for fd in pair],
            start_new_session=True,  # a process group of its own: stopping it before the workers say hello
        )
    finally:
        for fd in [fd for pair in theirs for fd in pair]:
            os.close(fd)
    _send_limits(zygote.stdin, limits)
    try:
        zygote.stdin.close()
    except OSError:
        pass
    return zygote, [_Worker(limits, pipes, zygote) for pipes in ours]


def _send_limits(stream, limits: Limits) -> None:
    """The first frame a starting process reads. If it has died already, its readers see that: the
    reply pipe ends, and `wait_ready` raises WorkerDied with its exit code."""
    try:
        write_frame(stream, limits)
    except (BrokenPipeError, OSError):
        pass


def _close_all(workers: list[_Worker], zygotes: list[subprocess.Popen], kill: bool = False) -> None:
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
        zygote, self._all = _start_zygote(limits, workers, zygote)
        self._zygotes = [zygote]
        self._idle: queue.Queue[_Worker | None] = queue.Queue()  # None: the pool is closed
        self._busy: set[_Worker] = set()  # workers a `_call` owns: it, not `close`, closes their pipes
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

    def _release(self, worker: _Worker) -> None:
        """Give the worker back after a call; once the pool is closed, close it instead."""
        with self._lock:
            self._busy.discard(worker)
            closed = self._closed
            if not closed:
                self._idle.put(worker)
        if closed:
            worker.close()

    def _replace(self, dead: _Worker) -> _Worker:
        dead.kill()
        dead.close()  # its pipes too: they would stay open until garbage collection
        fresh = _Worker(self.limits)
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
