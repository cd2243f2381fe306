"""One cost run in a warm worker: a confined child execs valgrind (or, for a plain run, Python) on the cost harness.

The worker writes the harness and the job's files read-only into its job directory and forks a child confined
exactly as a suite run's (`isolation.confine`: the worker's private network namespace, the sandbox uid, a
scrubbed environment, rlimits) with RLIMIT_NPROC at 1, so the solution can neither fork nor start a thread:
every instruction it causes is in the one process valgrind counts. The child execs
`valgrind --tool=cachegrind --cache-sim=no --trace-children=yes --log-fd=N <python> -s -S -P cost_harness.py MODE
DIR ENTRY`, valgrind's log on a pipe at fd N, in the fds valgrind reserves for itself (see `_child`); what
the child prints (the harness's report among it) arrives on another pipe. `--trace-children=yes`: a program
the solution execs runs under valgrind too and announces itself in the log (a second banner), instead of
running uncounted and unseen. Everything the child started is killed before the
result is returned; the trusted side decides from it (runner.efficiency.cost_runs).
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import signal
import time
from pathlib import Path

from runner.sandbox.confine import isolation
from runner.sandbox.confine.limits import Limits
from runner.sandbox.confine.supervise import Watch, fork_child, supervise
from runner.sandbox.cost_job import CostRun, CostRunResult
from runner.sandbox.job_place import JobPlace, write_readonly

HARNESS_SOURCE = (Path(__file__).parent / "child" / "cost_harness.py").read_text(encoding="utf-8")
"""Read when the worker imports this module (the sandbox uid may not be able to read the harness's files)."""
HARNESS_FILE = "cost_harness.py"
_TAIL_BYTES = 256 * 1024
_JOB_FILES = ("inputs.pkl", "solution.bin", "solution.py")
VALGRIND_ARGS = ("--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", "--trace-children=yes")
MIN_OPEN_FILES = 64
"""The child's file limit at least: valgrind keeps the top 12 fds below it for itself (its log among them)."""
VALGRIND_MEMORY_MB = 4096
"""Address space above the worker's own for a child under valgrind (its tool and translation cache need room)."""

__all__ = ["CostRun", "CostRunResult", "run_cost_job"]


def _command(job: CostRun, test_dir: str, log_fd: int) -> list[str]:
    # Not -I: it ignores PYTHONHASHSEED (the sandbox environment's 0), and a random string hash seed moves a
    # count by ~50,000 instructions from run to run; -s -S -P keep the user's and site's paths out all the same.
    python = [job.python, "-s", "-S", "-P", os.path.join(test_dir, HARNESS_FILE), job.mode, test_dir, job.entry_point]
    return [job.valgrind, *VALGRIND_ARGS, f"--log-fd={log_fd}", *python] if job.valgrind else python


def _child(job: CostRun, place: JobPlace, slot, limits: Limits, fds: tuple[int, int]) -> None:
    """In the forked child: plumb fds (0 null, 1-2 output, the last one valgrind's log), confine, exec. Never returns.

    Valgrind's log is the highest fd the file limit allows: inside the range valgrind reserves for itself,
    where the client's close, dup2 and write all fail (EBADF), so the solution can neither silence the log
    nor swap it; nor reopen it through /proc/self/fd/N (the pipe is root's, mode 0600: EACCES for the
    sandbox uid; without the uid drop it could, and add lines: a second summary or banner, which
    `runner.efficiency.cost_runs` refuses, but never take valgrind's own lines away).
    """
    out_w, log_w = fds
    log_fd = limits.max_open_files - 1
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (devnull, out_w, log_w)]  # above the targets 0-2
        for target, fd in zip((0, 1, log_fd), high, strict=True):
            os.dup2(fd, target)
        os.dup2(1, 2)
        os.closerange(3, log_fd)
        os.closerange(log_fd + 1, 65536)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        isolation.confine(limits, slot, place.scratch)
        os.chdir(place.scratch)
        command = _command(job, place.test_dir, log_fd)
        os.execve(command[0], command, dict(os.environ))
    except BaseException as exc:
        try:
            os.write(2, f"sandbox: could not start the cost run: {exc!r}\n".encode())
        finally:
            os._exit(70)


def _child_limits(job: CostRun, limits: Limits) -> Limits:
    memory = max(limits.memory_mb, VALGRIND_MEMORY_MB) if job.valgrind else limits.memory_mb
    return dataclasses.replace(limits, cpu_s=max(job.cpu_s, 1.0), timeout_s=max(job.timeout_s, 1.0), max_processes=1,
                               memory_mb=memory, max_open_files=max(limits.max_open_files, MIN_OPEN_FILES))  # fmt: skip


def run_cost_job(job: CostRun, slot, limits: Limits, base: dict, place: JobPlace) -> CostRunResult:
    """Run one cost run in a confined child and return what was observed (runner.efficiency.cost_runs decides)."""
    start = time.monotonic()
    result = CostRunResult(isolation=dict(base))
    limits = _child_limits(job, limits)
    marks = isolation.scratch_marks()
    try:
        place.clear()
        for name, data in job.files.items():
            if name not in _JOB_FILES:
                raise ValueError(f"unexpected file in a cost job: {name!r}")
            write_readonly(os.path.join(place.test_dir, name), data)
        write_readonly(os.path.join(place.test_dir, HARNESS_FILE), HARNESS_SOURCE)
        place.fresh_scratch(slot, limits)
        _supervise(job, place, slot, limits, result)
    except (OSError, ValueError) as exc:
        result.harness_error = f"the cost run could not be prepared: {exc}"
    finally:
        place.clear()
        isolation.remove_scratch_files(slot, since=marks)
    result.wall_s = time.monotonic() - start
    return result


def _keep_tail(buffer: bytearray, chunk: bytes) -> None:
    buffer += chunk
    if len(buffer) > _TAIL_BYTES:
        del buffer[: len(buffer) - _TAIL_BYTES]


def _supervise(job: CostRun, place: JobPlace, slot, limits: Limits, result: CostRunResult) -> None:
    def child(fds: list[int]) -> None:
        _child(job, place, slot, limits, (fds[0], fds[1]))

    pid, (out_r, log_r) = fork_child(child, 2)
    result.pid = pid
    output, log = bytearray(), bytearray()
    ending = supervise(pid, {out_r: lambda c: _keep_tail(output, c), log_r: lambda c: _keep_tail(log, c)}, slot,
                       Watch(limits.timeout_s))  # fmt: skip
    result.status, result.timed_out, result.leftovers = ending.status, ending.timed_out, ending.leftovers
    result.cpu_s = ending.usage.ru_utime + ending.usage.ru_stime
    result.maxrss_kb = ending.usage.ru_maxrss
    result.output = bytes(output).decode("utf-8", "replace")
    result.log = bytes(log).decode("utf-8", "replace")
