"""The programs a cost run needs: valgrind and a Python the sandbox uid may run, found once per process."""

from __future__ import annotations

import functools
import importlib.util
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from runner.caches.fingerprint import files_digest
from runner.repo.env import EnvError, find_python

_MEASURE_FILES = (
    Path(__file__).resolve().parents[1] / "sandbox" / "child" / "cost_harness.py",
    Path(__file__).resolve().parents[1] / "sandbox" / "cost_run.py",
    Path(__file__).resolve().parent / "cost_runs.py",
    Path(__file__).resolve().parent / "perf_inputs.py",
    Path(__file__).resolve().parent / "solution.py",
)


class ToolsMissing(RuntimeError):
    """valgrind or a usable Python is not installed; the message says what to install."""


@dataclass(frozen=True)
class Tools:
    """valgrind and the harness Python, their versions, and whether our bytecode loads in that Python."""

    python: str
    python_version: str
    valgrind: str
    valgrind_version: str
    same_bytecode: bool
    """The harness Python's bytecode magic is ours: solutions travel compiled (marshal), not as source."""

    def key(self) -> str:
        """What a cost depends on besides the solution and the inputs: the tools and the measure's own code."""
        return files_digest(_MEASURE_FILES, self.python, self.python_version, self.valgrind_version)


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    return (done.stdout or done.stderr).strip()


@functools.lru_cache(maxsize=1)
def find_tools() -> Tools:
    """valgrind on PATH and a Python an unprivileged uid may run (runner.repo.env.find_python); raises ToolsMissing."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise ToolsMissing(
            "valgrind is not installed; install it (apt-get install valgrind) or set efficiency.enabled=false"
        )
    try:
        python = find_python()
    except EnvError as err:
        raise ToolsMissing(str(err)) from None
    probe = "import importlib.util, sys; print(sys.version.split()[0], importlib.util.MAGIC_NUMBER.hex())"
    version, magic = _run([python, "-I", "-S", "-c", probe]).split()
    return Tools(python, version, valgrind, _run([valgrind, "--version"]), magic == importlib.util.MAGIC_NUMBER.hex())
