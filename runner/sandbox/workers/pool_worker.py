"""One worker process of the sandbox pool, seen from the pool: started on its own or forked by the
pool's zygote, spoken to over two pipes in length-prefixed pickle frames (runner.sandbox.workers.frames), each
read with a deadline."""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import time

from runner.sandbox.confine.limits import Limits
from runner.sandbox.cost_job import CostRun
from runner.sandbox.repo_job import RepoRun
from runner.sandbox.sandbox_job import SandboxJob
from runner.sandbox.workers.frames import write_frame
from runner.sandbox.workers.zygote import MAX_WORKERS, EarlyZygote, worker_command, worker_env

_STARTUP_TIMEOUT_S = 120.0


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


class PoolWorker:
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
            write_frame(self.requests, job)
        except (BrokenPipeError, OSError) as err:
            raise WorkerDied(f"worker is gone: {err}") from err
        return self._read(job.reply_budget(self.limits.timeout_s))

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


def start_zygote(limits: Limits, count: int, early: EarlyZygote | None) -> tuple[subprocess.Popen, list[PoolWorker]]:
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
                PoolWorker(limits, pipes, early.proc) for pipes in ours
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
    return zygote, [PoolWorker(limits, pipes, zygote) for pipes in ours]


def _send_limits(stream, limits: Limits) -> None:
    """The first frame a starting process reads. If it has died already, its readers see that: the
    reply pipe ends, and `wait_ready` raises WorkerDied with its exit code."""
    try:
        write_frame(stream, limits)
    except (BrokenPipeError, OSError):
        pass
