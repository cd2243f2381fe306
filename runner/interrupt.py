"""Ctrl-C and SIGTERM as one exception, so a job stops through its `finally` blocks.

`install()` makes the first SIGINT or SIGTERM raise `Interrupted` in the main thread; the job's clean-up
(sandbox workers stopped, MLflow run ended KILLED, records already on disk kept) then runs as the
exception unwinds. Later signals are ignored while that clean-up runs, so a second Ctrl-C cannot cut it
short. `received()` tells clean-up code (an atexit hook, a `finally`) that the process was interrupted.
"""

from __future__ import annotations

import signal

_received: list[int] = []


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
    raise Interrupted(signum)


def install() -> None:
    """Route SIGINT and SIGTERM to `Interrupted` (call from the main thread, before the work starts)."""
    signal.signal(signal.SIGINT, _handle)
    signal.signal(signal.SIGTERM, _handle)


def received() -> int | None:
    """The signal that interrupted this process, or None."""
    return _received[0] if _received else None
