"""Benchmark switches for the sandbox's speed-ups that reach into CPython or pytest internals.

`RUNNER_BENCH_OFF=name,...` (read once, when this module is first imported; the pool passes it on to
its workers) turns the named ones off, so that bench/bench_internals.py can measure what each saves.
Users never set it. The names:

- `dict_versions`: the forked child checks the guarded objects by reading dict version tags and
  function code pointers through ctypes (runner.sandbox.guarded_objects) instead of comparing
  every entry;
- `huge_pages`: the warm worker's heap is collapsed into transparent huge pages
  (runner.sandbox.huge_pages);
- `compile_cache`: suites are assertion-rewritten ahead and trusted modules compiled in the worker,
  served to the child through patched `_pytest.assertion.rewrite._rewrite_test` and
  `SourceFileLoader.source_to_code` (runner.sandbox.compile_cache);
- `prepared_session`: pytest is configured once in the worker through `_pytest.config._prepareconfig`
  and the child runs `_pytest.main._main` (runner.sandbox.pytest_child.prepare_session); off, each
  child runs `pytest.main` itself.
"""

from __future__ import annotations

import os

ENV = "RUNNER_BENCH_OFF"
NAMES = ("dict_versions", "huge_pages", "compile_cache", "prepared_session")
OFF = frozenset(name.strip() for name in os.environ.get(ENV, "").split(",") if name.strip())
if OFF - set(NAMES):
    raise SystemExit(f"{ENV}: unknown name(s) {sorted(OFF - set(NAMES))}; choose from {', '.join(NAMES)}")


def enabled(name: str) -> bool:
    """Whether the speed-up `name` (one of NAMES) is in use in this process."""
    return name not in OFF
