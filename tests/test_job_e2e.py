"""End to end with the real embedded model: a job runs, is killed, resumes and re-runs from cache."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _command(tmp: Path, run_dir: str) -> list[str]:
    return [
        sys.executable, "-m", "runner",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): the resume stays as it was
        "task_set.ids=[two_sum,is_palindrome,common_prefix]", "sampling.num_predict=96",
        f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts",
        f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/{run_dir}",
        "backend.n_threads=2",  # a fixed thread count: free cores vary on a busy machine, and with them the cache key
    ]  # fmt: skip


def _lines(path: Path) -> list[str]:
    return sorted(path.read_text().splitlines())


@pytest.mark.slow
def test_job_is_killed_resumes_and_reruns_from_cache(tmp_path):
    killed = subprocess.Popen(_command(tmp_path, "killed"), cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    attempts = tmp_path / "killed" / "attempts.jsonl"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (attempts.exists() and attempts.read_text().count("\n") >= 1):
        time.sleep(0.2)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    finished_before_kill = _lines(attempts)
    assert finished_before_kill, "the job wrote no record before it was killed"

    resumed = subprocess.run(_command(tmp_path, "resumed"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Passed:" in resumed.stdout and "first attempt" in resumed.stdout
    resumed_lines = _lines(tmp_path / "resumed" / "attempts.jsonl")
    assert set(finished_before_kill) <= set(resumed_lines)  # finished work is identical, not redone
    records = [json.loads(line) for line in resumed_lines]
    assert {r["task_id"] for r in records} == {"two_sum", "is_palindrome", "common_prefix"}
    assert all(r["completion_tokens"] > 0 and r["messages"][0]["role"] == "system" for r in records)

    again = subprocess.run(_command(tmp_path, "again"), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert " 0 misses" in again.stdout  # no generation, no test run: everything came from the cache
    assert _lines(tmp_path / "again" / "attempts.jsonl") == resumed_lines

    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlflow.db")
    runs = mlflow.search_runs(experiment_names=["runner"], output_format="list")
    finished = [r for r in runs if r.info.status == "FINISHED"]
    assert len(finished) == 2
    assert all("pass_at_1_first" in r.data.metrics and r.data.tags.get("task_set_hash") for r in finished)
