"""The sandbox's speed-ups that reach into CPython or pytest internals: where each holds, and switches
that turn each off for a benchmark.

Each is kept because it saves at least 5% of a `make bench` benchmark's wall time (README.md, Benchmarks;
measured by bench/bench_internals.py), and each depends on versions pinned in pyproject.toml:

- `dict_versions` (Python 3.11-3.13): the forked child checks the guarded objects by reading dict
  version tags and function code pointers through ctypes (runner.sandbox.child.guarded_objects) instead of
  comparing every entry;
- `prepared_session` (pytest 9.2): pytest is configured once in the worker through
  `_pytest.config._prepareconfig` and `Config._do_configure`, and the child runs `_pytest.main._main`
  (runner.sandbox.child.pytest_child.prepare_session); without it each child runs `pytest.main` itself;
- `rewrite_cache` (pytest 9.2, with `prepared_session`): the worker puts each suite file's rewritten
  pyc, cached across runs, into the job's `__pycache__` (runner.sandbox.speedups.rewrite_cache) instead of
  every child rewriting the suite's asserts;
- `direct_collection` (pytest 9.2, with `prepared_session`): the child collects each suite file as a
  module of the job directory's node, made once in the worker, instead of resolving it as a command-line
  argument (runner.sandbox.speedups.direct_collection).

On another version a speed-up is not used (the slower plain path runs instead) and a one-line
warning says why. `RUNNER_BENCH_OFF=name,...` (read once, when this module is first imported; the
pool passes it on to its workers) turns the named ones off, for bench/bench_internals.py; users never
set it.
"""

from __future__ import annotations

import os
import sys
import warnings

ENV = "RUNNER_BENCH_OFF"
NAMES = ("dict_versions", "prepared_session", "rewrite_cache", "direct_collection")
PYTHON_VERSIONS = ((3, 11), (3, 12), (3, 13))
"""The CPython versions whose object layout `dict_versions` was tested on (requires-python matches)."""
PYTEST_SERIES = "9.2"
"""The pytest series whose private functions `prepared_session`, `rewrite_cache` and `direct_collection` use
(pinned in pyproject.toml)."""
OFF = frozenset(name.strip() for name in os.environ.get(ENV, "").split(",") if name.strip())
if OFF - set(NAMES):
    raise SystemExit(f"{ENV}: unknown name(s) {sorted(OFF - set(NAMES))}; choose from {', '.join(NAMES)}")


def unsupported(name: str, python: tuple[int, int] | None = None, pytest_version: str | None = None) -> str | None:
    """Why the speed-up `name` cannot be used with these versions (default: this process's), or None."""
    if name == "dict_versions":
        python = python or sys.version_info[:2]
        tested = ", ".join(f"{major}.{minor}" for major, minor in PYTHON_VERSIONS)
        if python not in PYTHON_VERSIONS:
            return f"it reads the object layouts of CPython {tested}, not {python[0]}.{python[1]}"
        return None
    if pytest_version is None:
        import importlib.metadata  # here, not at the top: the pool's warm-up process starts before it is needed

        pytest_version = importlib.metadata.version("pytest")
    if pytest_version.split(".")[:2] != PYTEST_SERIES.split("."):
        return f"it uses private functions of pytest {PYTEST_SERIES}, not {pytest_version}"
    return None


def enabled(name: str) -> bool:
    """Whether the speed-up `name` (one of NAMES) is in use in this process (warns once if unsupported)."""
    if name in OFF:
        return False
    reason = unsupported(name)
    if reason is not None:
        warnings.warn(f"runner: sandbox speed-up {name} is off: {reason} (results are the same, only slower)",
                      RuntimeWarning, stacklevel=2)  # fmt: skip
        return False
    return True
