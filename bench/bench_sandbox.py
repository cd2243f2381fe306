"""Throughput of the sandboxed harness: warm WorkerPool vs. a cold `python -m pytest` per candidate.

Usage: .venv/bin/python bench/bench_sandbox.py [N] [COLD_N]
Prints measured figures only; nothing here is asserted.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from load_average import load_average  # this script's folder is on sys.path

from runner.judging.suite_module import build_suite_module, suite_file_name
from runner.sandbox.workers.pool import Limits, SandboxJob, WorkerPool
from runner.tasks.model import Task

TASK = Task(
    id="add",
    entry_point="add",
    prompt="Add two integers.",
    reference="def add(a, b):\n    return a + b\n",
    suites={
        "visible": "def test_small():\n    assert add(1, 2) == 3\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
        "hidden": "def test_big():\n    assert add(10**6, 1) == 10**6 + 1\n",
        "properties": (
            "@given(st.integers(), st.integers())\ndef test_ref(a, b):\n    assert add(a, b) == reference.add(a, b)\n"
        ),
    },
)
WORKERS = 2


def files_for(i: int, suites: tuple[str, ...]) -> dict[str, str]:
    files = {"candidate.py": f"def add(a, b):\n    return a + b  # candidate {i}\n", "reference.py": TASK.reference}
    for suite in suites:
        files[suite_file_name(suite)] = build_suite_module(TASK, suite)
    return files


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_pool(pool: WorkerPool, n: int, suites: tuple[str, ...]) -> None:
    jobs = [SandboxJob(files_for(i, suites), tuple((s, suite_file_name(s)) for s in suites)) for i in range(n)]
    start = time.perf_counter()
    with ThreadPoolExecutor(WORKERS * 2) as executor:
        results = list(executor.map(pool.run, jobs))
    elapsed = time.perf_counter() - start
    passed = sum(all(s.passed for s in r.suites.values()) for r in results)
    per_suite_ms = [1000 * r.duration_s / len(suites) for r in results]
    print(
        f"warm pool, {WORKERS} workers, suites={'+'.join(suites)}: {n} candidates in {elapsed:.2f} s = "
        f"{n / elapsed:.1f} candidates/s ({n * len(suites) / elapsed:.1f} suite runs/s); "
        f"per suite run p50 {statistics.median(per_suite_ms):.1f} ms, p95 {percentile(per_suite_ms, 0.95):.1f} ms; "
        f"passed {passed}/{n}; load {load_average()}"
    )


def cold_one(i: int, suites: tuple[str, ...]) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        files = files_for(i, suites)
        guard = Path(__file__).resolve().parents[1] / "runner" / "suites" / "candidate_guard.py"
        files["candidate_guard.py"] = guard.read_text()
        for name, text in files.items():
            Path(tmp, name).write_text(text)
        start = time.perf_counter()
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(suite_file_name(s) for s in suites)]
        subprocess.run(args, cwd=tmp, capture_output=True, check=False)
        return time.perf_counter() - start


def bench_cold(n: int, suites: tuple[str, ...]) -> None:
    start = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as executor:
        times = list(executor.map(lambda i: cold_one(i, suites), range(n)))
    elapsed = time.perf_counter() - start
    print(
        f"cold `python -m pytest` per candidate, {WORKERS} in parallel, suites={'+'.join(suites)}: "
        f"{n} candidates in {elapsed:.2f} s = {n / elapsed:.1f} candidates/s; "
        f"per candidate p50 {1000 * statistics.median(times):.0f} ms, p95 {1000 * percentile(times, 0.95):.0f} ms; "
        f"load {load_average()}"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cold_n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    before, start = load_average(), time.perf_counter()
    with WorkerPool(workers=WORKERS, limits=Limits(hypothesis_examples=100)) as pool:
        print(f"pool start-up: {time.perf_counter() - start:.2f} s (load before {before}); isolation: {pool.isolation}")
        bench_pool(pool, 20, ("visible",))  # settle
        bench_pool(pool, n, ("visible",))
        bench_pool(pool, n // 2, ("visible", "hidden", "properties"))
    bench_cold(cold_n, ("visible",))
    bench_cold(cold_n, ("visible", "hidden", "properties"))


if __name__ == "__main__":
    main()
