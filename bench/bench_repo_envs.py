"""Time to prepare repo task environments, cold and warm, and one sandboxed test run per task.

Usage: .venv/bin/python bench/bench_repo_envs.py [TASK_DIR] [fresh_uv_cache=1] [runs=N]

Cold: every environment of the task set built into a new, empty env_dir (with `fresh_uv_cache=1` also
with an empty uv cache, so every wheel is downloaded from PyPI); warm: the same call again, which finds
them. Then `runs` sandboxed test runs of each task's gold patch in a warm pool (median). Prints figures
only; nothing here is asserted.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from load_average import load_average  # this script's folder is on sys.path

from runner.repo.env import Environments
from runner.repo.run_answer import judge_repo
from runner.sandbox.workers.pool import Limits, WorkerPool
from runner.tasks.loader import load_task_dir

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    """Measure and print."""
    options = dict(a.split("=", 1) for a in argv if "=" in a)
    paths = [a for a in argv if "=" not in a]
    default = ROOT / "tasks" / "repo_starter"
    task_dir = Path(paths[0]) if paths else default if default.is_dir() else ROOT / "tests" / "fixtures" / "repo_tasks"
    tasks = [t for t in load_task_dir(task_dir) if t.kind == "repo"]
    runs = int(options.get("runs", 3))
    print(f"task set {task_dir}: {len(tasks)} repo tasks, {len({t.requirements for t in tasks})} distinct environments")
    with tempfile.TemporaryDirectory(prefix="bench-envs-", dir="/var/tmp") as tmp:
        os.chmod(tmp, 0o755)
        if options.get("fresh_uv_cache") == "1":
            os.environ["UV_CACHE_DIR"] = str(Path(tmp) / "uv-cache")
        envs = Environments(Path(tmp) / "envs")
        envs.python  # noqa: B018 (finds and probes the interpreter outside the timings)
        for label in ("cold", "warm"):
            started = time.perf_counter()
            for task in tasks:
                env = envs.ensure(task.requirements)
                reqs = ", ".join(task.requirements) or "(pytest only)"
                print(f"  {label} {task.id:<28} {env.seconds:7.2f} s  {'built' if env.built else 'found'}  {reqs}")
            print(f"{label}: {time.perf_counter() - started:.2f} s for all {len(tasks)} tasks")
        with WorkerPool(1, Limits(timeout_s=60, cpu_s=60)) as pool:
            for task in tasks:
                times, outcome = [], None
                for _ in range(runs):
                    started = time.perf_counter()
                    outcome = judge_repo(task, task.gold_patch, pool, envs).outcome
                    times.append(time.perf_counter() - started)
                print(f"  judge {task.id:<28} median {statistics.median(times):.2f} s of {runs} ({outcome.value})")
    print(f"load average: {load_average()}")


if __name__ == "__main__":
    main(sys.argv[1:])
