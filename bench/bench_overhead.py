"""Harness overhead over pure generation time, for a job on the embedded model.

Runs the default experiment (seed-10 tasks, SmolLM2-135M via llama.cpp, one repair round, MLflow
tracking into a temporary store) from a cold cache, then replays every request the job made against a
fresh backend with nothing else running ("pure generation": the same messages and options, so the same
tokens at temperature 0). The overhead is the job's wall time over that pure generation time; model
loading (the backend's preflight) is timed apart, as the backend's cost rather than the harness's.
The job and the replay each run in a process that has loaded no model before (in one that had, every
answer came out different and generation 1.6x slower), and the script says how many replayed answers
are not the job's; the model load is timed in the replay's process.

    uv run python bench/bench_overhead.py [extra Hydra overrides ...]
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.compose import compose_with_hydra
from runner.generation.backends import GenerationOptions, make_backend
from runner.job import run_job
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
    start, tokens, same = time.perf_counter(), 0, 0
    for record in records:
        options = GenerationOptions(**{**record.options, "stop": tuple(record.options["stop"])})
        generation = await backend.generate(record.messages, options)
        tokens += generation.completion_tokens
        same += generation.text == record.response
    elapsed = time.perf_counter() - start
    await backend.aclose()
    return {"seconds": elapsed, "tokens": tokens, "same": same, "load_s": load_s, "threads": backend.threads_in_use}


def _replay_in_fresh_process(attempts: Path, extra: list[str]) -> dict:
    """`_pure_generation` of the job's requests in a new interpreter (this script's `replay` mode)."""
    done = subprocess.run([sys.executable, __file__, "replay", str(attempts), *extra], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def replay_main(attempts: str, extra: list[str]) -> None:
    """The `replay` mode: print the pure generation of the requests in `attempts` as one JSON line."""
    with tempfile.TemporaryDirectory() as tmp_name:
        cfg = _config(Path(tmp_name), extra)
    print(json.dumps(asyncio.run(_pure_generation(cfg, read_attempts(attempts)))))


def main(extra: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cfg = _config(tmp, extra)
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = run_job(cfg, tmp / "job")
        wall = time.perf_counter() - start
        records = read_attempts(tmp / "job" / "attempts.jsonl")
        run_info = json.loads((tmp / "job" / "run.json").read_text())
        replay = _replay_in_fresh_process(tmp / "job" / "attempts.jsonl", extra)
    in_job = sum(r.generation_s for r in records)
    generation, pure_tokens, load_s = replay["seconds"], replay["tokens"], replay["load_s"]
    tokens = sum(r.completion_tokens for r in records)
    tests = sum(r.test_s for r in records)
    harness = wall - generation - load_s
    print(f"job exit code           {code}")
    print(f"attempts                {len(records)} ({tokens} tokens in the job, {pure_tokens} replayed; "
          f"{len(records) - replay['same']} replayed answer(s) not the job's)")  # fmt: skip
    print(f"job wall time           {wall:8.2f} s")
    print(f"generation in the job   {in_job:8.2f} s  (sum of generation_s)")
    print(f"pure generation         {generation:8.2f} s  (the same requests replayed alone)")
    print(f"model load (backend)    {load_s:8.2f} s")
    print(f"test runs (sum)         {tests:8.2f} s  (overlapped with generation)")
    print(f"harness overhead        {harness:8.2f} s = {harness / generation:.1%} of generation time")
    print(f"overhead incl. load     {wall - generation:8.2f} s = {(wall - generation) / generation:.1%}")
    timings = run_info["timings"]
    print(f"  of which scoring      {timings['scoring_s']:8.2f} s, MLflow logging {timings.get('tracking_s', 0):.2f} s")
    print(f"llama.cpp threads       {run_info['tags']['backend_threads']} in the job, {replay['threads']} replayed")
    print(f"load average            {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["replay"]:
        replay_main(sys.argv[2], sys.argv[3:])
    else:
        main(sys.argv[1:])
