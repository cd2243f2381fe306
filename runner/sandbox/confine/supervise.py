"""The one supervision loop of every confined child (a function task's session, a repo task's run, a cost run).

`supervise` watches a forked child until it exits or must be stopped: it reads the child's pipes as they fill
(each read end's bytes go to its sink), stops the child at its wall-clock deadline or when the run's `Watch`
says so (a CPU limit, an output cap, a flooded channel), kills it and everything it left behind in the slot,
then drains the pipes. What differs between runs is only in their `Watch`: when the deadline is, what to check
before each wait and after each read.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from runner.sandbox.confine import isolation

DRAIN_S = 0.5
"""After the kill, how long the pipes are read for what was written before it (every writer is dead by then)."""


class Watch:
    """When a supervised child is stopped; the default: at a fixed deadline, nothing else checked."""

    def __init__(self, timeout_s: float) -> None:
        self.ends_at = time.monotonic() + timeout_s

    def deadline(self) -> float:
        """The monotonic time at which the child's wall clock runs out."""
        return self.ends_at

    def wake_at(self) -> float:
        """The latest monotonic time to wake up at even if nothing arrives (a poll due before the deadline)."""
        return self.deadline()

    def before_wait(self, now: float) -> bool:
        """Checked before each wait (e.g. the CPU time used): True stops the child."""
        return False

    def after_read(self) -> bool:
        """Checked after each round of reads (e.g. the output caps): True stops the child."""
        return False

    def on_timeout(self, pid: int) -> None:
        """Called once at the deadline, while the child still lives (e.g. to read how long it waited for a CPU)."""


@dataclass
class Ending:
    """How a supervised child ended: its wait status and resource usage, and whether it was stopped."""

    status: int | None = None
    usage: resource.struct_rusage | None = None
    timed_out: bool = False
    stopped: bool = False
    """The watch stopped it (a limit or a cap) before it exited or its time ran out."""
    leftovers: bool = False
    """Processes of the slot survived the kill (never expected; the run is then not trusted)."""


def fork_child(child: Callable[[list[int]], None], pipes: int, given: bytes | None = None) -> tuple[int, list[int]]:
    """Fork `child(fds)` with `pipes` fresh pipes it writes to (the child must never return: it execs or `_exit`s);
    the parent keeps their read ends, returned with the child's pid. `given`: bytes the child reads from one more
    pipe, whose read end comes first in its `fds` (the parent writes them and closes its end)."""
    pairs = [os.pipe() for _ in range(pipes)]
    config = os.pipe() if given is not None else None
    sys.stdout.flush()  # what the worker buffered is not written twice, once by the child
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:  # the child never returns into the worker's code, whatever happens here
            for read_fd, _ in pairs:
                os.close(read_fd)
            given_fds = []
            if config is not None:
                os.close(config[1])
                given_fds = [config[0]]
            child([*given_fds, *(write_fd for _, write_fd in pairs)])
        finally:
            os._exit(70)  # a child function that returned or raised: never a verdict
    for _, write_fd in pairs:
        os.close(write_fd)
    if config is not None:
        os.close(config[0])
        try:
            os.write(config[1], given)
        except BrokenPipeError:  # the child is gone already: its ending says why
            pass
        os.close(config[1])
    return pid, [read_fd for read_fd, _ in pairs]


def supervise(pid: int, sinks: dict[int, Callable[[bytes], None]], slot, watch: Watch) -> Ending:
    """Watch child `pid` to its end, feeding each read end in `sinks` its bytes; kill it and the slot's leftovers;
    drain and close the read ends. The caller's `watch` decides the deadline and the early stops."""
    ending = Ending()
    pidfd = os.pidfd_open(pid)
    watched = [*sinks, pidfd]
    try:
        while ending.status is None:
            now = time.monotonic()
            if now >= watch.deadline():
                ending.timed_out = True
                watch.on_timeout(pid)
                break
            if watch.before_wait(now):
                ending.stopped = True
                break
            ready, _, _ = select.select(watched, [], [], max(0.0, min(watch.deadline(), watch.wake_at()) - now))
            for fd in ready:
                if fd == pidfd:
                    _, ending.status, ending.usage = os.wait4(pid, 0)
                    watched.remove(pidfd)
                    continue
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    sinks[fd](chunk)
                else:
                    watched.remove(fd)
            if watch.after_read():  # also in the round the child exited: a cap it broke still counts
                ending.stopped = ending.status is None
                break
        if ending.status is None:
            os.kill(pid, signal.SIGKILL)
            _, ending.status, ending.usage = os.wait4(pid, 0)
        ending.leftovers = not isolation.kill_everything(pid, slot)
        _drain(sinks, DRAIN_S)
    finally:
        os.close(pidfd)
        for fd in sinks:
            os.close(fd)
    return ending


def _drain(sinks: dict[int, Callable[[bytes], None]], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    for fd in sinks:
        os.set_blocking(fd, False)
    open_fds = list(sinks)
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(open_fds, [], [], max(0.0, deadline - time.monotonic()))
        for fd in ready:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                sinks[fd](chunk)
            else:
                open_fds.remove(fd)
