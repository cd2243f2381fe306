"""What tracing every attempt (runner.tracking.traces, `tracking.traces`) costs the default job.

Without a job folder, the script first runs the default job (`python -m runner`: seed-10 tasks, SmolLM2-135M
via llama.cpp, one repair round) into a temporary store and times its wall clock. Then, in interleaved
rounds (the order of the two alternating), it repeats the job's tracking step on that job's records, each
time on a fresh store and run: the results as `JobRun.log_results` logs them plus `run_views.log_job_views`
(dataset input, per-sample table and, with traces on, every attempt as a trace), once with
`tracking.traces=true` and once with `false`. The cost of tracing is the median difference, and its share
of the job's wall time. The load average is printed with every round: the machine is shared.

    uv run python bench/bench_tracing.py [JOB_DIR wall_s=S] [rounds=N]
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from load_average import load_average  # this script's folder is on sys.path
from omegaconf import OmegaConf

from runner.config import Config
from runner.records import read_attempts
from runner.results.scoring import task_table
from runner.tasks import load_task_set
from runner.tracking.run_views import log_job_views
from runner.tracking.runs import JobRun

ROOT = Path(__file__).resolve().parents[1]


def _default_job(tmp: Path) -> tuple[Path, float]:
    """Run the default job into tmp; its folder and wall time."""
    out = tmp / "default_job"
    command = [sys.executable, "-m", "runner", f"hydra.run.dir={out}", f"cache_dir={tmp}/cache",
               f"tracking.uri=sqlite:///{tmp}/job.db", f"tracking.artifact_root={tmp}/job_artifacts"]  # fmt: skip
    print(f"running the default job (load average {load_average()}) ...", flush=True)
    start = time.perf_counter()
    job = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if job.returncode not in (0, 2):
        raise SystemExit(f"the default job failed ({job.returncode}):\n{job.stderr[-3000:]}")
    return out, wall


def _config(job_dir: Path, store: Path, traces: bool) -> Config:
    cfg = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(Config), OmegaConf.load(job_dir / "config.yaml")))
    cfg.tracking = dataclasses.replace(cfg.tracking, enabled=True, uri=f"sqlite:///{store}/mlflow.db",
                                       artifact_root=str(store / "artifacts"), traces=traces)  # fmt: skip
    return cfg


def _tracking_step(job_dir: Path, tmp: Path, traces: bool) -> tuple[float, dict]:
    """Seconds of the job's tracking step on a fresh store and run, with or without traces."""
    store = Path(tempfile.mkdtemp(dir=tmp))
    out = store / "job"
    shutil.copytree(job_dir, out, ignore=shutil.ignore_patterns("attempts"))
    cfg = _config(job_dir, store, traces)
    records = read_attempts(out / "attempts.jsonl")
    metrics = json.loads((out / "summary.json").read_text())
    tasks = load_task_set(cfg.task_set, cfg.cache_dir)
    run = JobRun(cfg, out)  # opened when the job starts: not part of the step
    start = time.perf_counter()
    timings = log_job_views(cfg, out, tasks, [], records, run)
    run.log_results(cfg, records, metrics, {}, task_table(records))
    seconds = time.perf_counter() - start
    run.end("FINISHED")
    shutil.rmtree(store, ignore_errors=True)
    return seconds, timings


def main(argv: list[str]) -> int:
    """Run the benchmark (see the module docstring); print every round and the result."""
    rounds = int(next((a.split("=", 1)[1] for a in argv if a.startswith("rounds=")), "5"))
    wall_arg = next((a.split("=", 1)[1] for a in argv if a.startswith("wall_s=")), None)
    given = [a for a in argv if "=" not in a]
    tmp = Path(tempfile.mkdtemp(prefix="bench_tracing_"))
    try:
        if given:
            if wall_arg is None:
                raise SystemExit("give the job's wall time with the folder: bench_tracing.py JOB_DIR wall_s=SECONDS")
            job_dir, wall = Path(given[0]), float(wall_arg)
        else:
            job_dir, wall = _default_job(tmp)
        attempts = len(read_attempts(job_dir / "attempts.jsonl"))
        print(f"job {job_dir}: {attempts} attempts, wall time {wall:.1f} s")
        on, off, traces_only = [], [], []
        for i in range(rounds):
            for traces in (True, False) if i % 2 == 0 else (False, True):
                seconds, timings = _tracking_step(job_dir, tmp, traces)
                (on if traces else off).append(seconds)
                if traces:
                    traces_only.append(timings.get("traces_s", 0.0))
                detail = f" (log_traces {timings.get('traces_s', 0.0):.3f} s)" if traces else ""
                mode = "on " if traces else "off"
                step = f"tracking step {seconds:.3f} s{detail}"
                print(f"round {i + 1} traces={mode}: {step}; load average {load_average()}", flush=True)
        cost = statistics.median(on) - statistics.median(off)
        print(f"median tracking step: {statistics.median(on):.3f} s with traces, {statistics.median(off):.3f} s "
              f"without; tracing costs {cost:.3f} s (log_traces alone {statistics.median(traces_only):.3f} s) = "
              f"{100 * cost / wall:.2f}% of the job's {wall:.1f} s wall time ({attempts} traces)")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
