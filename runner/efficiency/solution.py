"""What one solution costs on a task's perf inputs: a counted run (valgrind) and a plain run, checked together.

The counted run gives the instructions (minus the task's baseline run: start-up, preloaded modules, inputs and
solution loaded, report written, everything but the calls); the plain run gives tracemalloc's peak, the call
time (information only) and each output's digests. The counted run's digests must equal the plain run's: a
counted run that ended early, before computing every output, cannot know them; the plain run's canonical
digests must equal the reference's (when given): an answer that is wrong on a perf input has no cost to
compare. Either mismatch is `error`, never a cheaper count.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.efficiency.cost import ERROR, MEASURED, TOO_SLOW, Cost
from runner.efficiency.cost_runs import BASELINE, COUNT, PLAIN, RunOutcome, run, solution_files
from runner.efficiency.tools import Tools
from runner.sandbox.workers.pool import WorkerPool


@dataclass(frozen=True)
class Measured:
    """A solution's Cost, the counted run's CPU seconds and the plain run's canonical digests (one per input)."""

    cost: Cost
    cpu_s: float = 0.0
    canonical: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    """What every run of one task shares: the tools, the inputs' pickle, the entry point, the baseline run."""

    pool: WorkerPool
    tools: Tools
    inputs: bytes
    entry_point: str
    calls: int
    """How many perf inputs `inputs` holds: every report must have one digest for each."""
    baseline: RunOutcome | None = None


def _failed(outcome: RunOutcome, what: str) -> Measured:
    return Measured(Cost(outcome.status, detail=f"{what}: {outcome.detail}"), outcome.cpu_s)


def baseline_run(setting: Setting, source: str, cpu_s: float) -> RunOutcome:
    """The task's baseline: a counted run of the harness with `source` loaded and never called."""
    files = {"inputs.pkl": setting.inputs, **solution_files(source, setting.tools)}
    return run(setting.pool, setting.tools, BASELINE, files, setting.entry_point, cpu_s)


def measure(setting: Setting, source: str, cpu_s: float, max_instructions: int | None = None,
            expected: tuple[str, ...] = ()) -> Measured:  # fmt: skip
    """Count `source` on the inputs within `cpu_s`; too_slow above `max_instructions` (net of the baseline)."""
    assert setting.baseline is not None and setting.baseline.instructions is not None
    files = {"inputs.pkl": setting.inputs, **solution_files(source, setting.tools)}
    counted = run(setting.pool, setting.tools, COUNT, files, setting.entry_point, cpu_s)
    if counted.status != MEASURED:
        return _failed(counted, "the counted run")
    net = max(counted.instructions - setting.baseline.instructions, 1)
    if max_instructions is not None and net > max_instructions:
        detail = f"{net:,} instructions, over the budget of {max_instructions:,}"
        return Measured(Cost(TOO_SLOW, instructions=net, detail=detail), counted.cpu_s)
    plain = run(setting.pool, setting.tools, PLAIN, files, setting.entry_point, cpu_s)
    if plain.status != MEASURED:
        return _failed(plain, "the plain run")
    if not len(plain.digests) == len(counted.digests) == setting.calls or not all("/" in d for d in plain.digests):
        return Measured(Cost(ERROR, detail="the plain run's report is not the harness's"), counted.cpu_s)
    fast = tuple(digest.split("/", 1)[0] for digest in plain.digests)
    canonical = tuple(digest.split("/", 1)[-1] for digest in plain.digests)
    if fast != counted.digests:
        detail = "the counted run's outputs differ from the plain run's (it ended early, or is not deterministic)"
        return Measured(Cost(ERROR, detail=detail), counted.cpu_s)
    if expected and canonical != expected:
        first = next(i for i, (a, b) in enumerate(zip(canonical, expected, strict=False)) if a != b) if len(
            canonical) == len(expected) else 0  # fmt: skip
        return Measured(Cost(ERROR, detail=f"its output on perf input #{first} differs from the reference's"))
    cost = Cost(MEASURED, instructions=net, peak_bytes=plain.peak_bytes, wall_s=plain.call_s)
    return Measured(cost, counted.cpu_s, canonical)
