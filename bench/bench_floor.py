"""The floor under any judge's wall time on the EvalPlus sets: the canonical solutions' own CPU time.

    .venv/bin/python bench/bench_floor.py [datasets=DIR] [workers=2] [sets=humanevalplus,mbppplus]

Each task's canonical solution is called on every base and plus input in this plain interpreter (no sandbox,
no pytest, no comparison with expected outputs), one task after another, and its CPU time taken. Whatever
judges those solutions must do at least this work, so with W workers no judge's wall time can go below
max(total / W, the largest task's time) (a task's inputs run in one process, as in EvalPlus and in ours).
Printed per set: the total, the largest tasks, that floor, and the floor as a ratio of a given EvalPlus time
(`evalplus_s=`, e.g. the figure bench/bench_evalplus.py just printed), with the load average.
`datasets=` defaults to $RUNNER_DATASETS_DIR or ../shared/datasets.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {"humanevalplus": "HumanEvalPlus-v0.1.10.jsonl.gz", "mbppplus": "MbppPlus-v0.2.0.jsonl.gz"}


def task_seconds(dataset: Path) -> dict[str, float]:
    """Task id -> CPU seconds of its canonical solution over all its base and plus inputs."""
    seconds = {}
    with gzip.open(dataset, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            task = json.loads(line)
            code = task["canonical_solution"]
            if task["task_id"].startswith("HumanEval"):
                code = task["prompt"] + code
            namespace: dict = {}
            exec(code, namespace)  # the dataset's own reference solutions, trusted as EvalPlus trusts them
            function = namespace[task["entry_point"]]
            parts = [task[part] for part in ("base_input", "plus_input") if isinstance(task[part], list)]
            inputs = [args for part in parts for args in part]
            start = time.process_time()
            for args in inputs:
                try:
                    function(*args)
                except Exception:  # noqa: BLE001 - an input the reference rejects is still work done
                    pass
            seconds[task["task_id"]] = time.process_time() - start
    return seconds


def main(argv: list[str]) -> int:
    """Print each set's floor."""
    options = dict(arg.split("=", 1) for arg in argv)
    default = os.environ.get("RUNNER_DATASETS_DIR") or ROOT.parent / "shared" / "datasets"
    datasets = Path(options.get("datasets") or default)
    workers = int(options.get("workers", 2))
    evalplus = [float(s) for s in options["evalplus_s"].split(",")] if "evalplus_s" in options else []
    for index, name in enumerate(options.get("sets", "humanevalplus,mbppplus").split(",")):
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        seconds = task_seconds(datasets / FILES[name])
        total, largest = sum(seconds.values()), sorted(seconds.items(), key=lambda item: -item[1])
        floor = max(total / workers, largest[0][1])
        print(f"{name}: {len(seconds)} tasks, the canonical solutions' own CPU {total:.1f} s (load {load}); "
              f"largest {', '.join(f'{t} {s:.1f} s' for t, s in largest[:4])}")  # fmt: skip
        line = f"  wall floor with {workers} workers: {floor:.1f} s"
        if index < len(evalplus):
            line += f" = {floor / evalplus[index]:.2f}x EvalPlus's {evalplus[index]:.1f} s"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
