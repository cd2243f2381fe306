"""One function task's candidate run, as the pool sends it to a worker."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxJob:
    """One candidate's run: files written into its fresh directory, and the suites to run in order.

    `files` maps a plain file name (no directories) to its source, e.g. candidate.py, reference.py,
    test_visible.py, or to the bytes of a data file; `suites` holds (suite name, test file name) pairs.
    """

    files: dict[str, str | bytes]
    suites: tuple[tuple[str, str], ...]
    time_limit_s: float = 0.0
    """Wall and CPU seconds per suite for this job, when more than the pool's limits (a slow reference)."""
    cpu_limit_s: float = 0.0
    """CPU seconds per suite for this job, scaled from its task's reference (0: the pool's)."""

    def reply_budget(self, timeout_s: float) -> float:
        """How long the pool waits for the worker's reply, given the pool's per-suite `timeout_s`: every suite may
        run to its timeout (in one session, or one session each when a suite imports the candidate eagerly and
        the shared session is abandoned), plus clean-up."""
        return len(self.suites) * (max(timeout_s, self.time_limit_s) + 10.0) + 30.0
