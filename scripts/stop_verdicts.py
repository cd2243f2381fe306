"""What stopping at the stop strings changes: a job's answers generated without them, judged whole and cut.

    python scripts/stop_verdicts.py RUN_DIR [task_set=humanevalplus] [out=DIR] [more Hydra overrides]

RUN_DIR is a job made with `prompts.stop=[]`. Each answer is cut where generation would have stopped at the
prompt set's stop strings (the text before the first one; the stop string itself is not part of an answer),
which is what a stopped generation returns when the text up to there is the same. Both sets of answers are
then judged by replay jobs of this harness (`backend=replay`), so the only difference between them is the
cut. Prints the characters saved and every task whose verdict differs, with both outcomes.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from runner.compose import compose_config
from runner.records import read_attempts


def cut(text: str, stops: list[str]) -> str:
    """`text` up to the first of `stops` (all of it when none occurs)."""
    ends = [text.find(stop) for stop in stops if stop in text]
    return text[: min(ends)] if ends else text


def replay(attempts: Path, out_dir: Path, task_set: str, overrides: list[str]) -> dict[str, str]:
    """Run a replay job of `attempts`; task id -> final outcome."""
    argv = [sys.executable, "-m", "runner", "backend=replay", f"backend.replay_file={attempts}", f"task_set={task_set}",
            "repair=none", f"hydra.run.dir={out_dir}", "progress=false", "tracking=off", *overrides]  # fmt: skip
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return {r.task_id: r.outcome.value for r in read_attempts(out_dir / "attempts.jsonl") if r.final}


def main(argv: list[str]) -> int:
    """Write the cut answers, judge both sets, print the differences."""
    if not argv or {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0 if argv else 2
    run_dir = Path(argv[0])
    options = dict(a.split("=", 1) for a in argv[1:] if a.split("=", 1)[0] in ("task_set", "out"))
    overrides = [a for a in argv[1:] if a.split("=", 1)[0] not in ("task_set", "out")]
    task_set, out = options.get("task_set", "humanevalplus"), Path(options.get("out", run_dir.parent / "stop_verdicts"))
    stops = list(compose_config([f"task_set={task_set}"]).prompts.stop)
    out.mkdir(parents=True, exist_ok=True)
    records = list(read_attempts(run_dir / "attempts.jsonl"))
    cut_records = [dataclasses.replace(r, response=cut(r.response, stops)) for r in records]
    whole_file, cut_file = out / "whole.jsonl", out / "cut.jsonl"
    for path, rows in ((whole_file, records), (cut_file, cut_records)):
        path.write_text("".join(r.to_json() + "\n" for r in rows), encoding="utf-8")
    whole_chars, cut_chars = sum(len(r.response) for r in records), sum(len(r.response) for r in cut_records)
    print(f"{len(records)} answers; stop strings {stops!r}")
    print(f"characters: {whole_chars} whole, {cut_chars} cut ({1 - cut_chars / whole_chars:.1%} saved)")
    whole = replay(whole_file, out / "whole", task_set, overrides)
    stopped = replay(cut_file, out / "cut", task_set, overrides)
    differ = sorted(t for t in whole if whole[t] != stopped.get(t))
    print(f"verdicts differ on {len(differ)}/{len(whole)} tasks")
    for task_id in differ:
        print(f"  {task_id}: whole {whole[task_id]}, cut {stopped.get(task_id)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
