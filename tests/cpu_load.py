"""A machine made busy on purpose: many spinning processes, each in a session of its own.

With the kernel's autogroup scheduling (on here) CPU time is shared between sessions first, so eight hogs
per core, each its own session, leave a sandboxed candidate (a session of its own too) about a ninth of a
core; without autogroup the hogs' default priority beats the sandbox's nice 10 (runner.sandbox.workers.zygote).
Either way the candidate spends most of its wall clock waiting for a CPU.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

HOGS_PER_CORE = 8


@contextlib.contextmanager
def every_core_busy():
    """Spin HOGS_PER_CORE processes per core for the duration of the block."""
    count = HOGS_PER_CORE * (os.cpu_count() or 1)
    hogs = [subprocess.Popen([sys.executable, "-S", "-c", "while True: pass"], start_new_session=True)
            for _ in range(count)]  # fmt: skip
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
