"""The environment of the pool's warm-up process, and that process started before the pool itself."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

from runner.sandbox.confine.priority import SANDBOX_NICE
from runner.sandbox.speedups import internals

# Only what starting the process needs is imported here: a tool starts it first, and every import before
# that delays the warm-up that every worker waits for (runner.sandbox.confine.limits alone cost 30 ms).

if TYPE_CHECKING:  # not imported: a tool starts this module's warm-up process first, before its own imports
    from runner.sandbox.confine.limits import Limits

MAX_WORKERS = 256
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))


def worker_command(*args: str) -> list[str]:
    """The command line of a warm-up process or worker: `python -m runner.sandbox.workers.worker ARGS` at nice 10.

    Niced from exec on, not only once its imports are done: the model's loader counts un-niced work of
    ours that turns niced meanwhile as another program's (generation.backends.cpu.free_cores)."""
    nice = shutil.which("nice")
    return [
        *([nice, "-n", str(SANDBOX_NICE)] if nice else []),
        sys.executable,
        "-P",
        "-m",
        "runner.sandbox.workers.worker",
        *args,
    ]


def worker_env() -> dict[str, str]:
    """The whole environment of a warm-up process and its workers."""
    # The worker is trusted but still gets no secrets; PYTHONHASHSEED fixes set/dict-of-str order
    # in every forked child (the variable cannot change the seed of an already running interpreter).
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": _PACKAGE_ROOT,
    }
    for name in ("HOME", "XDG_CACHE_HOME", internals.ENV):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


class EarlyZygote:
    """A pool's warm-up process started before the pool's size and limits are known (a tool composes
    its config meanwhile): it imports what every worker needs, then waits for them. Hand it to
    `WorkerPool(zygote=...)`, or `close` it (also as a context manager)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                worker_command("--early-zygote", str(theirs.fileno())),
                stdin=subprocess.DEVNULL,
                env=worker_env(),
                cwd="/",
                pass_fds=[theirs.fileno()],
                start_new_session=True,
            )
        finally:
            theirs.close()
        self.socket: socket.socket | None = ours

    def start(self, limits: Limits, fds: list[int]) -> subprocess.Popen:
        """Send the limits and the workers' pipe ends (request read, reply write, per worker)."""
        import pickle

        try:
            socket.send_fds(self.socket, [pickle.dumps(limits)], fds)
        except OSError:  # it has died: the workers' reply pipes end, and wait_ready says so
            pass
        self.socket.close()
        self.socket = None
        return self.proc

    def close(self) -> None:
        """Stop it, if it was never handed to a pool."""
        if self.socket is not None:
            self.socket.close()
            self.socket = None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def __enter__(self) -> EarlyZygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
