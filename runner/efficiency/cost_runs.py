"""One sandboxed cost run of a solution, and what it says: counted instructions, peak memory, output digests.

A run's counts are trusted only from valgrind's log (a pipe the solution can add lines to, never silence or
take lines from: runner.sandbox.cost_run) and only when it holds exactly one banner and one summary, all from
the process we started: valgrind always writes its own, so a forged line makes two; the harness's report line (its
digests, peak and seconds) is checked against a second run (see `runner.efficiency.solution`). A run stopped
by its CPU or wall limit is `too_slow`; anything else that went wrong is `error`, with one line saying what.
"""

from __future__ import annotations

import marshal
import os
import re
import signal
from dataclasses import dataclass

from runner.efficiency.cost import ERROR, MEASURED, TOO_SLOW
from runner.efficiency.tools import Tools
from runner.sandbox.cost_job import CostRun, CostRunResult
from runner.sandbox.workers.pool import WorkerDied, WorkerPool

COUNT, BASELINE, PLAIN = "count", "baseline", "plain"
_SUMMARY = re.compile(r"^==(\d+)== I\s+refs:\s+([\d,]+)\s*$", re.MULTILINE)
_PID = re.compile(r"^==(\d+)==", re.MULTILINE)
_BANNER = re.compile(r"^==\d+== Command: ", re.MULTILINE)
_REPORT = re.compile(r"^@@cost (\w+) (\d+) ([\d.e+-]+) (\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class RunOutcome:
    """What one run says: status, counted instructions (count and baseline runs), the harness's report."""

    status: str
    detail: str = ""
    instructions: int | None = None
    peak_bytes: int | None = None
    call_s: float | None = None
    digests: tuple[str, ...] = ()
    cpu_s: float = 0.0
    maxrss_kb: int = 0
    wall_s: float = 0.0


def solution_files(source: str, tools: Tools) -> dict[str, bytes]:
    """The solution as the harness loads it: compiled here and marshalled when both Pythons share bytecode."""
    if tools.same_bytecode:
        return {"solution.bin": marshal.dumps(compile(source, "solution.py", "exec"))}
    return {"solution.py": source.encode("utf-8")}


def run(pool: WorkerPool, tools: Tools, mode: str, files: dict[str, bytes], entry_point: str, cpu_s: float,
        counted: bool | None = None) -> RunOutcome:  # fmt: skip
    """One cost run of the harness in `mode`, under valgrind when `counted` (default: COUNT and BASELINE)."""
    counted = mode != PLAIN if counted is None else counted
    timeout = 4 * cpu_s + 20.0
    job = CostRun(dict(files), tools.python, tools.valgrind if counted else "", mode, entry_point, cpu_s, timeout)
    reply = pool.run_cost(job)
    if isinstance(reply, WorkerDied):
        return RunOutcome(ERROR, f"the sandbox worker died twice: {reply}")
    return interpret(reply, mode, cpu_s, counted)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("@@cost")]
    line = lines[-1] if lines else ""
    return line if len(line) <= 200 else line[:197] + "..."


def interpret(result: CostRunResult, mode: str, cpu_limit_s: float, counted: bool) -> RunOutcome:
    """The outcome of a finished run (under valgrind when `counted`), from what the trusted worker observed alone."""
    facts = {"cpu_s": result.cpu_s, "maxrss_kb": result.maxrss_kb, "wall_s": result.wall_s}
    if result.harness_error:
        return RunOutcome(ERROR, result.harness_error, **facts)
    status = result.status if result.status is not None else 0
    stopped = os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)
    if result.timed_out:
        return RunOutcome(TOO_SLOW, f"stopped at its wall limit ({result.wall_s:.1f} s)", **facts)
    if stopped and result.cpu_s >= 0.9 * max(cpu_limit_s, 1.0):
        return RunOutcome(TOO_SLOW, f"stopped at its CPU limit ({max(cpu_limit_s, 1.0):.1f} s)", **facts)
    if result.leftovers:
        return RunOutcome(ERROR, "processes of the run survived every attempt to kill them", **facts)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return RunOutcome(ERROR, f"the run was killed by {name}: {_last_line(result.output)}".rstrip(": "), **facts)
    if os.WEXITSTATUS(status) != 0:
        said = _last_line(result.output)
        return RunOutcome(ERROR, f"the run exited with code {os.WEXITSTATUS(status)}: {said}".rstrip(": "), **facts)
    reports = _REPORT.findall(result.output)
    if len(reports) != 1 or reports[0][0] != mode:
        return RunOutcome(ERROR, f"the harness's report is missing or not alone ({len(reports)} found)", **facts)
    _, peak, seconds, digests = reports[0]
    instructions = None
    if counted:
        pids = set(_PID.findall(result.log))
        summaries, banners = _SUMMARY.findall(result.log), len(_BANNER.findall(result.log))
        if pids != {str(result.pid)} or len(summaries) != 1 or banners != 1:
            found = f"{len(summaries)} summaries and {banners} banners from processes {sorted(pids)}"
            return RunOutcome(ERROR, f"valgrind's log is not one summary of the run ({found})", **facts)
        instructions = int(summaries[0][1].replace(",", ""))
    return RunOutcome(MEASURED, "", instructions, int(peak), float(seconds),
                      tuple(digests.split(",")) if digests != "-" else (), **facts)  # fmt: skip
