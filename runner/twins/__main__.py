"""`python -m runner.twins`: a task set's twins as EvalPlus-style JSONL, for other harnesses.

    python -m runner.twins task_set=humanevalplus family=rename out=FILE [seed=N] [other Hydra overrides]

One line per twin: task_id (`<original>~<family>`), twin_of, family, prompt, entry_point, canonical_solution
(the twin's whole reference program: run it to compute the expected outputs, as EvalPlus does), base_input (the
argument lists of the suites' literal calls), plus_input (the plus inputs, for an EvalPlus set) and atol. Then a
line on stderr per task a family made no twin of, with the reason.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runner.cli import Option, UsageError, parse_args
from runner.compose import compose_config
from runner.twins.inputs import plus_rows, suite_inputs
from runner.twins.make import FAMILIES, make_twins

OPTIONS = (
    Option("family", f"one of {', '.join(FAMILIES)}, or all", required=True, metavar="F"),
    Option("out", "the JSONL file to write", required=True, metavar="FILE"),
    Option("seed", "the twins' seed (names, example inputs)", default_text="twins.seed", type=int, metavar="N"),
)


def _plain(value):
    """A value as JSON has it: tuples and sets as lists, complex numbers and others as their repr."""
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def _atol(task) -> float:
    source = task.suites.get("properties", "")
    for line in source.splitlines():
        if line.startswith("_ATOL = "):
            return float(line.split("=", 1)[1])
    return 0.0


def twin_rows(twins: list) -> list[dict]:
    """The EvalPlus-style row of each twin."""
    return [
        {
            "task_id": t.id,
            "twin_of": t.twin_of,
            "family": t.family,
            "prompt": t.prompt,
            "entry_point": t.entry_point,
            "canonical_solution": t.reference,
            "base_input": [_plain(list(args)) for args in suite_inputs(t)],
            "plus_input": [_plain(list(args)) for args, _ in plus_rows(t)],
            "atol": _atol(t),
        }
        for t in twins
    ]


def main(argv: list[str]) -> int:
    """CLI entry: writes the JSONL, says how many twins per family; 1 if no twin was made."""
    from runner.tasks import load_task_set
    from runner.validation import typed_config

    options, overrides = parse_args(argv, OPTIONS, "runner.twins", __doc__)
    family = options["family"]
    if family not in (*FAMILIES, "all"):
        raise UsageError(f"family={family} is not a twin family; use one of {', '.join(FAMILIES)} or all")
    cfg = typed_config(compose_config(overrides))
    seed = options.get("seed", cfg.twins.seed)
    tasks = load_task_set(cfg.task_set, cfg.cache_dir)
    twins, skipped = make_twins(tasks, family, seed, cfg.cache_dir)
    rows = twin_rows(twins)
    Path(options["out"]).write_text("".join(json.dumps(row) + "\n" for row in rows))
    for s in skipped:
        print(f"no {s.family} twin of {s.task_id}: {s.reason}", file=sys.stderr)
    print(f"{len(rows)} twin(s) of {len(tasks)} task(s) written to {options['out']}; {len(skipped)} not made")
    return 0 if rows else 1


if __name__ == "__main__":
    from runner.cli import run

    run(main)
