"""Harness overhead over pure generation time, for a job on the embedded model.

Runs the default experiment (seed-10 tasks, SmolLM2-135M via llama.cpp, one repair round, MLflow
tracking into a temporary store) from a cold cache, then compares the job's wall time with the sum of
the time the model spent generating (each record's `generation_s`). Model loading (the backend's
preflight) is timed apart and reported on its own line: it is the backend's cost, not the harness's.

    uv run python bench/bench_overhead.py [extra Hydra overrides ...]
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

from hydra import compose, initialize_config_dir

from runner.config import register_configs
from runner.generation.backends import make_backend
from runner.job import run_job
from runner.records import read_attempts

CONF = str(Path(__file__).resolve().parents[1] / "conf")


def _config(tmp: Path, extra: list[str]):
    register_configs()
    overrides = [
        f"cache_dir={tmp}/cache",
        f"tracking.uri=sqlite:///{tmp}/mlflow.db",
        f"tracking.artifact_root={tmp}/artifacts",
        "progress=false",
        *extra,
    ]
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


async def _time_model_load(cfg) -> float:
    backend = make_backend(cfg.backend, cfg.model)
    start = time.perf_counter()
    await backend.describe()
    elapsed = time.perf_counter() - start
    await backend.aclose()
    return elapsed


def main(extra: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cfg = _config(tmp, extra)
        load_s = asyncio.run(_time_model_load(cfg))
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = run_job(cfg, tmp / "job")
        wall = time.perf_counter() - start
        records = read_attempts(tmp / "job" / "attempts.jsonl")
    generation = sum(r.generation_s for r in records)
    tests = sum(r.test_s for r in records)
    harness = wall - generation - load_s
    print(f"job exit code           {code}")
    print(f"attempts                {len(records)} ({sum(r.completion_tokens for r in records)} tokens generated)")
    print(f"job wall time           {wall:8.2f} s")
    print(f"generation (sum)        {generation:8.2f} s")
    print(f"model load (backend)    {load_s:8.2f} s")
    print(f"test runs (sum)         {tests:8.2f} s  (overlapped with generation)")
    print(f"harness overhead        {harness:8.2f} s = {harness / generation:.1%} of generation time")
    print(f"overhead incl. load     {wall - generation:8.2f} s = {(wall - generation) / generation:.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
