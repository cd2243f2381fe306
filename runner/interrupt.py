"""Ctrl-C and SIGTERM as one exception, so a job stops through its `finally` blocks.

`install()` makes the first SIGINT or SIGTERM raise `Interrupted` in the main thread; the job's clean-up
(sandbox workers stopped, MLflow run ended KILLED, records already on disk kept) then runs as the
exception unwinds. Later signals are ignored while that clean-up runs, so a second Ctrl-C cannot cut it
short. `received()` tells clean-up code (an atexit hook, a `finally`) that the process was interrupted.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import weakref
from collections.abc import Callable

_received: list[int] = []
_hooks: list[weakref.WeakMethod] = []


class Interrupted(KeyboardInterrupt):
    """The process got SIGINT or SIGTERM; `exit_code` is the shell's 128 + signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _handle(signum: int, frame: object) -> None:
    if _received:
        return
    _received.append(signum)
    for hook in list(_hooks):
        method = hook()
        if method is not None:
            method()
    raise Interrupted(signum)


def install() -> None:
    """Route SIGINT and SIGTERM to `Interrupted` (call from the main thread, before the work starts)."""
    signal.signal(signal.SIGINT, _handle)
    signal.signal(signal.SIGTERM, _handle)


def received() -> int | None:
    """The signal that interrupted this process, or None."""
    return _received[0] if _received else None


def on_signal(method: Callable[[], None]) -> None:
    """Call the bound `method` when the signal arrives, before `Interrupted` unwinds the main thread.

    For work in other threads that must stop at once (a generation in llama.cpp's threads): the exception
    reaches only the main thread, and the clean-up that would stop them runs after the event loop unwinds.
    `method` runs inside the signal handler, so it must only set a flag (no lock, no I/O). Held weakly: an
    object that is gone is not called.
    """
    _hooks.append(weakref.WeakMethod(method))


def exit_now(code: int) -> None:
    """End the interrupted process with `code` once its clean-up has run, without waiting for worker threads.

    A llama.cpp request still reading its prompt gives no token at which to stop, and Python's exit would join
    its thread (tens of seconds on a loaded CPU) for an answer that is discarded anyway. The atexit handlers
    still run (MLflow's flushing among them) and the output is flushed; then the process ends.
    """
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)
