"""The source of the modules shipped into every sandbox job beside the candidate (this package's
candidate_guard.py), read on the trusted side."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def guard_source() -> str:
    """Source of runner/suites/candidate_guard.py, shipped into every sandbox job as candidate_guard.py.

    Read once per process (the worker reads it before forking: a sandboxed child may not be able to).
    """
    from runner.suites import candidate_guard

    return Path(candidate_guard.__file__).read_text(encoding="utf-8")
