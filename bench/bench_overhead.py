"""Harness overhead over pure generation time, for jobs on the embedded model.

Each round runs the default experiment (seed-10 tasks, SmolLM2-135M via llama.cpp, one repair round,
MLflow tracking into a temporary store) twice, each job in a fresh process:
- cold: a fresh store and cache, so the store is created and the gold check runs;
- warm: the next job on the same store and cache (the gold check cached), with the cached generations
  and verdicts deleted, so it generates and judges everything again: a user's second job.
Between the two, every request the cold job made is replayed against a fresh backend with nothing else
running ("pure generation": the same messages and options, as many requests in flight as the job keeps,
`backend.max_concurrency`). A job's time generating is the time at least one of its requests was in flight;
what is left of its wall time is outside generation. A job's overhead is its wall time beyond that pure
generation and the model's load (the backend's preflight, timed in the replay's process: the backend's cost
rather than the harness's). Every process has loaded no model before (in one that had, every answer came
out different and generation 1.6x slower); the script says how many answers differ from the cold job's.
Rounds are medianed: the machine's speed drifts.

    uv run python bench/bench_overhead.py [rounds=N] [extra Hydra overrides ...]
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import zip_longest
from pathlib import Path

from load_average import load_average  # this script's folder is on sys.path

from runner.compose import compose_with_hydra
from runner.generation.backends import GenerationOptions, make_backend
from runner.job.run import run_job
from runner.records import read_attempts
from runner.validation import typed_config


def _config(tmp: Path, extra: list[str]):
    overrides = [
        f"cache_dir={tmp}/cache",
        f"tracking.uri=sqlite:///{tmp}/mlflow.db",
        f"tracking.artifact_root={tmp}/artifacts",
        "progress=false",
        *extra,
    ]
    return typed_config(compose_with_hydra(overrides))


async def _pure_generation(cfg, records) -> dict:
    backend = make_backend(cfg.backend, cfg.model)
    start = time.perf_counter()
    await backend.describe()
    load_s = time.perf_counter() - start
    in_flight = asyncio.Semaphore(cfg.backend.max_concurrency)  # as many at once as the job sends

    async def replay(record):
        async with in_flight:
            options = GenerationOptions(**{**record.options, "stop": tuple(record.options["stop"])})
            return await backend.generate(record.messages, options)

    start = time.perf_counter()
    generations = await asyncio.gather(*(replay(record) for record in records))
    elapsed = time.perf_counter() - start
    await backend.aclose()
    tokens = sum(g.completion_tokens for g in generations)
    same = sum(g.text == r.response for g, r in zip(generations, records, strict=True))
    return {"seconds": elapsed, "tokens": tokens, "same": same, "load_s": load_s, "threads": backend.threads_in_use}


def _in_fresh_process(*args: str) -> dict:
    """Run this script's `job` or `replay` mode in a new interpreter; its last output line, as JSON."""
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def replay_main(attempts: str, extra: list[str]) -> None:
    """The `replay` mode: print the pure generation of the requests in `attempts` as one JSON line."""
    with tempfile.TemporaryDirectory() as tmp_name:
        cfg = _config(Path(tmp_name), extra)
    print(json.dumps(asyncio.run(_pure_generation(cfg, read_attempts(attempts)))))


def _sandbox_cpu() -> float:
    """CPU seconds of every live process below this one, with the children they reaped (the sandbox pool)."""
    found, todo, total = set(), [os.getpid()], 0.0
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            with contextlib.suppress(OSError):
                children = {int(c) for c in (task / "children").read_text().split()} - found
                found |= children
                todo += children
    for pid in found:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def job_main(tmp: str, job_dir: str, extra: list[str]) -> None:
    """The `job` mode: run the job with its store and cache under `tmp`; print its exit code, its wall time,
    when it generated first and last, how long at least one request was in flight, and the sandbox's CPU
    time between the first request and the last answer."""
    import threading

    from runner.generation.backends.llamacpp import LlamaCppBackend

    generate, marks, lock = LlamaCppBackend._generate_sync, {"generating": 0.0, "in_flight": 0}, threading.Lock()

    def timed(backend, *args):  # the bench's own instrumentation of the job (requests run in several threads)
        with lock:
            if "first" not in marks:  # (setdefault would walk /proc for every request)
                marks["first"] = (time.perf_counter(), _sandbox_cpu())
            marks["in_flight"] += 1
            if marks["in_flight"] == 1:
                marks["since"] = time.perf_counter()
        try:
            return generate(backend, *args)
        finally:
            with lock:
                marks["in_flight"] -= 1
                if marks["in_flight"] == 0:  # the last answer always brings the count back to 0
                    marks["generating"] += time.perf_counter() - marks["since"]
                    marks["last"] = (time.perf_counter(), _sandbox_cpu())

    LlamaCppBackend._generate_sync = timed
    cfg = _config(Path(tmp), extra)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = run_job(cfg, Path(job_dir))
    wall = time.perf_counter() - start
    (first, cpu_first), (last, cpu_last) = marks["first"], marks["last"]
    print(json.dumps({"code": code, "wall": wall, "before_first": first - start, "after_last": start + wall - last,
                      "generating": marks["generating"], "sandbox_cpu_beside": cpu_last - cpu_first}))  # fmt: skip


def _job(tmp: Path, name: str, extra: list[str]) -> dict:
    job = _in_fresh_process("job", str(tmp), str(tmp / name), *extra)
    records = read_attempts(tmp / name / "attempts.jsonl")
    run_info = json.loads((tmp / name / "run.json").read_text())
    in_job = job["generating"]
    return {**job, "records": records, "in_job": in_job, "outside": job["wall"] - in_job,
            "threads": run_info["tags"]["backend_threads"], "timings": run_info["timings"]}  # fmt: skip


def _round(extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cold = _job(tmp, "cold", extra)
        replay = _in_fresh_process("replay", str(tmp / "cold" / "attempts.jsonl"), *extra)
        for results in ("generation", "verdict"):
            shutil.rmtree(tmp / "cache" / results, ignore_errors=True)
        warm = _job(tmp, "warm", extra)
    for job in (cold, warm):
        job["overhead"] = (job["wall"] - replay["seconds"] - replay["load_s"]) / replay["seconds"]
    return {"cold": cold, "warm": warm, "replay": replay}


def _print_round(number: int, figures: dict) -> None:
    cold, warm, replay = figures["cold"], figures["warm"], figures["replay"]
    records = cold["records"]
    tokens = sum(r.completion_tokens for r in records)
    warm_differ = sum(
        a != b for a, b in zip_longest([r.response for r in records], [r.response for r in warm["records"]])
    )
    print(f"round {number}: {len(records)} attempts, {tokens} tokens; replayed answers not the cold job's: "
          f"{len(records) - replay['same']}, warm job's answers not the cold job's: {warm_differ}")  # fmt: skip
    print(f"  pure generation   {replay['seconds']:8.2f} s, model load {replay['load_s']:.2f} s "
          f"({replay['threads']} llama.cpp threads)")  # fmt: skip
    for name, job in (("cold", cold), ("warm", warm)):
        print(f"  {name} job          {job['wall']:8.2f} s wall (exit {job['code']}, {job['threads']} threads): "
              f"{job['in_job']:.2f} s generating; {job['outside']:.2f} s outside generation = "
              f"{job['outside'] / job['in_job']:.1%} of it ({job['before_first']:.2f} s before the first, "
              f"{job['after_last']:.2f} s after the last); sandbox CPU beside generation "
              f"{job['sandbox_cpu_beside']:.2f} s; overhead over the replay {job['overhead']:.1%}")  # fmt: skip
    print(f"  load average      {load_average()}", flush=True)


def main(argv: list[str]) -> None:
    rounds = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("rounds=")), 1)
    extra = [a for a in argv if not a.startswith("rounds=")]
    runs = []
    for number in range(1, rounds + 1):
        runs.append(_round(extra))
        _print_round(number, runs[-1])
    for name in ("cold", "warm"):
        for what, figure in (("outside generation", lambda job: job["outside"] / job["in_job"]),
                             ("over the replay", lambda job: job["overhead"])):  # fmt: skip
            values = [figure(run[name]) for run in runs]
            print(f"{name} job, {what}: median {statistics.median(values):.1%} of {rounds} round(s) "
                  f"({', '.join(f'{v:.1%}' for v in values)})")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["replay"]:
        replay_main(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ["job"]:
        job_main(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main(sys.argv[1:])
