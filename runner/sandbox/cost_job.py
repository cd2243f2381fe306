"""A cost run as the pool sends it to a worker (runner.sandbox.cost_run), and what the worker observed of it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CostRun:
    """One run of the cost harness (runner.sandbox.child.cost_harness) in a confined child.

    `files` go into the job directory read-only (inputs.pkl, solution.bin or solution.py); `python` is an
    interpreter the sandbox uid may run; `valgrind` the valgrind binary, or "" for a plain run; `mode` the
    harness's (count, baseline, plain); `cpu_s` the child's CPU limit, `timeout_s` its wall limit.
    """

    files: dict[str, bytes]
    python: str
    valgrind: str
    mode: str
    entry_point: str
    cpu_s: float
    timeout_s: float

    def reply_budget(self, timeout_s: float) -> float:
        """How long the pool waits for the worker's reply: the run's own wall limit and clean-up (not the pool's)."""
        return self.timeout_s + 40.0


@dataclass
class CostRunResult:
    """What the trusted worker observed: valgrind's log (from a pipe the solution cannot reach), the child's
    capped output (where the harness's report line is), how it ended, its CPU seconds and RSS high-water."""

    log: str = ""
    output: str = ""
    pid: int = 0
    status: int | None = None
    timed_out: bool = False
    cpu_s: float = 0.0
    wall_s: float = 0.0
    maxrss_kb: int = 0
    leftovers: bool = False
    harness_error: str = ""
    isolation: dict[str, bool] = field(default_factory=dict)
