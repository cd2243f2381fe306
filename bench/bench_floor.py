"""The floor under any judge's wall time on the EvalPlus sets: the canonical solutions' own work.

    .venv/bin/python bench/bench_floor.py [datasets=DIR] [workers=2] [sets=humanevalplus,mbppplus]
                                          [evalplus_s=S,S]

Each task's canonical solution is called on every base and plus input in a plain interpreter (no sandbox,
no pytest, no comparison with expected outputs), and its CPU time taken. Whatever judges those solutions must
do at least this work, so with W workers no judge's wall time can go below max(total / W, the largest task's
time) (a task's inputs run in one process, as in EvalPlus and in ours). The same calls are also run as a bare
judge: W forked worker processes taking the tasks in dataset order, whose wall time is the floor as the
machine gives it right now (bench/bench_evalplus.py runs it between its own rounds, so the three sides share
the machine's state). Printed per set: the total, the largest tasks, both floors, with the load average, and
the floor as a ratio of a given EvalPlus time (`evalplus_s=`, one per set, e.g. from bench/bench_evalplus.py).
`datasets=` defaults to $RUNNER_DATASETS_DIR or ../shared/datasets.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

from load_average import load_average  # this script's folder is on sys.path

ROOT = Path(__file__).resolve().parents[1]
FILES = {"humanevalplus": "HumanEvalPlus-v0.1.10.jsonl.gz", "mbppplus": "MbppPlus-v0.2.0.jsonl.gz"}
_TASKS: list[dict] = []  # the set being judged, inherited by the forked workers


def read_tasks(dataset: Path) -> list[dict]:
    """The dataset file's tasks, in order."""
    with gzip.open(dataset, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def solution_code(task: dict) -> str:
    """The task's canonical solution as a whole module (a HumanEval solution is the body after its prompt)."""
    code = task["canonical_solution"]
    return task["prompt"] + code if task["task_id"].startswith("HumanEval") else code


def _cpu_seconds(index: int) -> tuple[str, float]:
    """One task: its canonical solution called on all of its base and plus inputs; (task id, CPU seconds)."""
    task = _TASKS[index]
    namespace: dict = {}
    exec(solution_code(task), namespace)  # the dataset's own reference solutions, trusted as EvalPlus trusts them
    function = namespace[task["entry_point"]]
    parts = [task[part] for part in ("base_input", "plus_input") if isinstance(task[part], list)]
    start = time.process_time()
    for args in (args for part in parts for args in part):
        try:
            function(*args)
        except Exception:  # noqa: BLE001 - an input the reference rejects is still work done
            pass
    return task["task_id"], time.process_time() - start


def floor(dataset: Path, workers: int) -> dict:
    """The set's floor: `cpu` (task id -> CPU seconds), `floor_s` (max(total / workers, largest)) and `wall_s`
    (the bare judge's wall time: `workers` forked processes taking the tasks in order)."""
    _TASKS[:] = read_tasks(dataset)
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        cpu = dict(pool.imap_unordered(_cpu_seconds, range(len(_TASKS)), chunksize=1))
    wall = time.perf_counter() - start
    _TASKS.clear()
    return {"cpu": cpu, "floor_s": max(sum(cpu.values()) / workers, max(cpu.values())), "wall_s": wall}


def describe(name: str, result: dict, workers: int) -> str:
    """Two lines: the solutions' own CPU and largest tasks, then both floors."""
    largest = sorted(result["cpu"].items(), key=lambda item: -item[1])[:4]
    total = sum(result["cpu"].values())
    return (
        f"{name}: {len(result['cpu'])} tasks, the canonical solutions' own CPU {total:.1f} s; "
        f"largest {', '.join(f'{t} {s:.1f} s' for t, s in largest)}\n"
        f"  floor with {workers} workers: {result['floor_s']:.1f} s; a bare judge's wall time {result['wall_s']:.1f} s"
    )


def main(argv: list[str]) -> int:
    """Print each set's floor."""
    options = dict(arg.split("=", 1) for arg in argv if "=" in arg)
    if set(options) - {"datasets", "workers", "sets", "evalplus_s"} or any("=" not in arg for arg in argv):
        raise SystemExit(
            "usage: bench_floor.py [datasets=DIR] [workers=N] [sets=humanevalplus,mbppplus] [evalplus_s=S,S]"
        )
    default = os.environ.get("RUNNER_DATASETS_DIR") or ROOT.parent / "shared" / "datasets"
    datasets = Path(options.get("datasets") or default)
    workers = int(options.get("workers", 2))
    evalplus = [float(s) for s in options["evalplus_s"].split(",")] if "evalplus_s" in options else []
    for index, name in enumerate(options.get("sets", "humanevalplus,mbppplus").split(",")):
        load = load_average()
        result = floor(datasets / FILES[name], workers)
        print(describe(name, result, workers) + f" (load before {load}, after {load_average()})")
        if index < len(evalplus):
            print(f"  floor / EvalPlus's {evalplus[index]:.1f} s: {result['floor_s'] / evalplus[index]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
