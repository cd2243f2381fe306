"""How repeatable, how costly and how right the efficiency measure is (runner.efficiency), on the seed10 tasks.

    .venv/bin/python bench/bench_efficiency.py [repeats=5] [load=2] [tasks=ID,...]

Per seed task: the reference measured `repeats` times idle and again under a load this script makes itself
(`load` busy Python processes, one per core by default), each time in the real sandbox (valgrind's cachegrind,
the sandbox uid): the net instruction count's spread ((max - min) / min), the raw count's, the spread of the
two memory measures (tracemalloc's peak, which the measure uses, and the kernel's RSS high-water above a
plain baseline run's), and the slowdown of the measurement (the counted run's wall time over a plain run's,
both whole processes: start-up included; the plain run has tracemalloc on). Then the known slow and fast
correct answers of tests/test_efficiency_measure.py with their instruction ratios to the reference. Prints
measured figures only, each table with the load average beside it; nothing is asserted or cached.
"""

from __future__ import annotations

import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from load_average import load_average  # noqa: E402  (this script's folder is on sys.path)

from runner.cli import Option, parse_args  # noqa: E402
from runner.config import EfficiencyConfig  # noqa: E402
from runner.efficiency.cost import MEASURED  # noqa: E402
from runner.efficiency.cost_runs import BASELINE, PLAIN, run, solution_files  # noqa: E402
from runner.efficiency.measure import measure_efficiency  # noqa: E402
from runner.efficiency.perf_inputs import declared_arguments  # noqa: E402
from runner.efficiency.solution import Setting, baseline_run, measure  # noqa: E402
from runner.efficiency.tools import find_tools  # noqa: E402
from runner.sandbox.workers.pool import Limits, WorkerPool  # noqa: E402
from runner.tasks.loader import load_task_dir  # noqa: E402

OPTIONS = [
    Option("repeats", int, 5, "measurements of each reference, idle and again under load"),
    Option("load", int, os.cpu_count() or 2, "busy processes started for the loaded measurements"),
    Option("tasks", str, "", "comma-separated seed10 task ids (default: all ten)"),
]
CPU_S = 120.0


def spread(values: list[float], digits: int = 3) -> str:
    """(max - min) / min, in percent; "-" when the smallest is 0 (an RSS that never rose above the baseline's)."""
    if not values or min(values) <= 0:
        return "-"
    return f"{100.0 * (max(values) - min(values)) / min(values):.{digits}f}%"


def one_task(pool: WorkerPool, task, repeats: int) -> dict:
    """`repeats` measurements of a task's reference: net and raw counts, peaks, RSS high-waters, wall times."""
    tools = find_tools()
    arguments = declared_arguments(task)
    inputs = pickle.dumps(arguments, protocol=4)
    setting = Setting(pool, tools, inputs, task.entry_point, len(arguments))
    files = {"inputs.pkl": inputs, **solution_files(task.reference, tools)}
    rows = {"net": [], "raw": [], "peak": [], "rss": [], "counted_s": [], "plain_s": []}
    for _ in range(repeats):
        baseline = baseline_run(setting, task.reference, CPU_S)
        counted = measure(replace(setting, baseline=baseline), task.reference, CPU_S)
        plain_baseline = run(pool, tools, BASELINE, files, task.entry_point, CPU_S, counted=False)
        plain = run(pool, tools, PLAIN, files, task.entry_point, CPU_S)
        count_run = run(pool, tools, "count", files, task.entry_point, CPU_S)
        if {counted.cost.status, plain.status, count_run.status} != {MEASURED}:
            raise SystemExit(f"{task.id}: the reference could not be measured: {counted.cost.detail or plain.detail}")
        rows["net"].append(counted.cost.instructions)
        rows["raw"].append(count_run.instructions)
        rows["peak"].append(counted.cost.peak_bytes)
        rows["rss"].append(plain.maxrss_kb - plain_baseline.maxrss_kb)
        rows["counted_s"].append(count_run.wall_s)
        rows["plain_s"].append(plain.wall_s)
    return rows


def print_spreads(pool: WorkerPool, tasks: list, label: str, repeats: int) -> None:
    """One line per task: the spreads of `repeats` measurements, and the measurement's slowdown."""
    print(f"\n## {label}: {repeats} measurements of each reference (load before: {load_average()})")
    print(
        "| task | net instructions (median) | net spread | raw spread | tracemalloc peak (median) | peak spread "
        "| RSS above baseline (median KB) | RSS spread | counted run s | plain run s | slowdown |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for task in tasks:
        rows = one_task(pool, task, repeats)
        counted_s, plain_s = statistics.median(rows["counted_s"]), statistics.median(rows["plain_s"])
        print(f"| {task.id} | {statistics.median(rows['net']):,.0f} | {spread(rows['net'])} "
              f"| {spread(rows['raw'])} | {statistics.median(rows['peak']):,.0f} | {spread(rows['peak'], 2)} "
              f"| {statistics.median(rows['rss']):,.0f} | {spread(rows['rss'], 1)} | {counted_s:.2f} "
              f"| {plain_s:.2f} | {counted_s / plain_s:.1f}x |", flush=True)  # fmt: skip
    print(f"(load after: {load_average()})")


def print_pairs(pool: WorkerPool, seed: dict, cache_dir: Path) -> None:
    """The known slow and fast answers with their ratios to the reference, and whether each pair ranks right."""
    from runner.caches.content import Cache
    from tests.test_efficiency_measure import FAST, SLOW

    cache, cfg = Cache(cache_dir), EfficiencyConfig(enabled=True, budget=1000.0)
    print(f"\n## known slow and fast correct answers (load before: {load_average()})")
    print(
        "| task | fast: instructions ratio | fast: memory ratio | slow: instructions ratio | slow: memory ratio "
        "| ranked right |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for task_id in sorted(FAST):
        fast = measure_efficiency(seed[task_id], FAST[task_id], pool, cfg, cache)
        slow = measure_efficiency(seed[task_id], SLOW[task_id], pool, cfg, cache)
        if fast.status != MEASURED or slow.status != MEASURED:
            print(f"| {task_id} | {fast.status} {fast.candidate} | | {slow.status} {slow.candidate} | | no |")
            continue
        right = "yes" if slow.instructions_ratio > fast.instructions_ratio else "NO"
        print(f"| {task_id} | {fast.instructions_ratio:.3f} | {fast.memory_ratio:.2f} | {slow.instructions_ratio:.3f} "
              f"| {slow.memory_ratio:.2f} | {right} |", flush=True)  # fmt: skip
    print(f"(load after: {load_average()})")


def main(argv: list[str]) -> int:
    """Idle spreads, loaded spreads, pairs."""
    options, extra = parse_args(argv, OPTIONS, "bench/bench_efficiency.py", __doc__)
    if extra:
        raise SystemExit(f"unknown arguments: {extra}")
    seed = {task.id: task for task in load_task_dir(REPO / "tasks" / "seed10")}
    wanted = [t for t in options["tasks"].split(",") if t] or sorted(seed)
    tools = find_tools()
    print(f"valgrind {tools.valgrind_version}, {tools.python} {tools.python_version}, {os.cpu_count()} cores")
    with WorkerPool(workers=1, limits=Limits(timeout_s=CPU_S, cpu_s=CPU_S)) as pool:
        print_spreads(pool, [seed[t] for t in wanted], "idle", options["repeats"])
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options["load"])]
        try:
            label = f"under load ({options['load']} busy processes)"
            print_spreads(pool, [seed[t] for t in wanted], label, options["repeats"])
        finally:
            for process in busy:
                process.kill()
                process.wait()
        with tempfile.TemporaryDirectory(prefix="bench-efficiency-") as tmp:
            print_pairs(pool, seed, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
