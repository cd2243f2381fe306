"""`python -m runner.gold`: the gold check of a task set, a row per task (what it checks: runner.judging.gold_check).

    python -m runner.gold task_set=seed10 [out=FILE] [workers=N] [judging.repeats=K] [twins=all] [other Hydra overrides]

judging.repeats=K runs each reference K times; one whose result changes is `flaky`. With `twins=...` the twins
of every function task are checked too, and a block per family says how many twins of the tasks whose reference
passes pass their own suites, and why each other one does not (or was not made).

Exit status 1 when any task's reference fails.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from runner.cli import Option, parse_args
from runner.compose import compose_config
from runner.judging.gold_check import GoldResult, pip_name
from runner.kinds.base import Bench
from runner.kinds.registry import check_references
from runner.twins.make import twin_gold_block, with_twins


def _table(results: list[GoldResult]) -> str:
    width = max([len(r.task_id) for r in results] + [7])
    lines = [f"{'task_id':<{width}}  {'status':<26}  detail"]
    for r in results:
        detail = r.detail.replace("\n", " | ")
        lines.append(f"{r.task_id:<{width}}  {r.status:<26}  {detail[:100]}")
    return "\n".join(lines)


OPTIONS = (
    Option("out", "also write the results as JSON to this file", metavar="FILE"),
    Option("workers", "sandbox worker processes", type=int, default_text="sandbox.workers", metavar="N"),
)


def _row(result: GoldResult) -> dict:
    """A report row: task_id, status, detail, and for env_missing_module each module with its pip name."""
    row = {k: v for k, v in asdict(result).items() if k != "modules"}
    if result.modules:
        row["modules"] = [{"module": m, "pip": pip_name(m)} for m in result.modules]
    return row


def main(argv: list[str]) -> int:
    """CLI entry: prints a table, writes the JSON report to out=, returns 1 if any task is not ok."""
    from runner.repo.env import environments
    from runner.sandbox.workers.pool import Limits, WorkerPool
    from runner.tasks import load_task_set
    from runner.validation import typed_config

    options, overrides = parse_args(argv, OPTIONS, "runner.gold", __doc__)
    cfg = typed_config(compose_config(overrides))
    workers = options.get("workers", cfg.sandbox.workers)
    with WorkerPool(workers, Limits.from_config(cfg.sandbox), wait=False) as pool:  # warms up while tasks load
        tasks = load_task_set(cfg.task_set, cfg.cache_dir)
        tasks, skipped, line = with_twins(tasks, cfg.twins.family, cfg.twins.seed, cfg.cache_dir)
        if line:
            print(line, flush=True)
        bench = Bench(pool, cfg.gate, cfg.repo, environments(cfg), gold_repeats=cfg.judging.repeats)
        results = check_references(tasks, bench, threads=2 * workers)
    print(_table(results))
    bad = [r for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)}/{len(results)} ok" + (f"; {len(bad)} not ok" if bad else ""))
    if line:
        print(twin_gold_block(tasks, results, skipped))
    if "out" in options:
        report = [_row(r) for r in results]
        Path(options["out"]).write_text(json.dumps(report, indent=2) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    from runner.cli import run

    run(main)
