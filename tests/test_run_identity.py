"""Real `python -m runner` jobs against real loopback OpenAI-compatible servers: what a run's cache and
folders hold.

Two servers that serve the same model id with different answers never share a cached generation; a re-run
counts its cache hits (`generations_cached`); a run overridden with only `model.id` is named after that
model; two jobs started at once with the same seed get a folder each.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
GOOD = "```python\ndef is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n```"
BAD = "```python\ndef is_palindrome(s):\n    return False\n```"


def _command(server: FakeOpenAI, tmp: Path, *extra: str, sweep: bool = False) -> list[str]:
    return [
        sys.executable, "-m", "runner", *(["-m"] if sweep else []), "backend=openai",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): these jobs stay fast
        f"backend.base_url={server.url}/v1", "model.id=coder",
        "task_set.ids=[is_palindrome,two_sum]", f"task_set.path={ROOT}/tasks/seed10", "tracking=off",
        "gold.enabled=false", "sandbox.workers=1", "repair.max_repairs=0", "progress=false",
        f"cache_dir={tmp}/cache", *extra,
    ]  # fmt: skip


def _job(server: FakeOpenAI, tmp: Path, run_dir: str) -> tuple[list[dict], dict]:
    job = subprocess.run(_command(server, tmp, f"hydra.run.dir={tmp}/{run_dir}"), cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert job.returncode == 0, job.stderr[-3000:]
    out = tmp / run_dir
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    return sorted(records, key=lambda r: r["task_id"]), json.loads((out / "summary.json").read_text())


def test_two_servers_with_one_model_id_never_share_a_generation_and_a_rerun_counts_its_hits(tmp_path):
    good, bad = FakeOpenAI(models=("coder",), reply=GOOD).start(), FakeOpenAI(models=("coder",), reply=BAD).start()
    try:
        first, first_metrics = _job(good, tmp_path, "good")
        second, second_metrics = _job(bad, tmp_path, "bad")
        audit = [{"task_id": "is_palindrome", "score": 0.75}, {"task_id": "two_sum", "score": None}]
        (tmp_path / "cache" / "audit").mkdir()  # the latest mutation audit, in the job's own cache_dir
        (tmp_path / "cache" / "audit" / "latest-seed10.json").write_text(json.dumps(audit))
        again, again_metrics = _job(good, tmp_path, "again")
    finally:
        good.stop()
        bad.stop()
    assert [r["outcome"] for r in first if r["task_id"] == "is_palindrome"] == ["passed"]
    assert [r["outcome"] for r in second if r["task_id"] == "is_palindrome"] == ["failed"]
    assert [r["response"] for r in second] == [BAD, BAD]
    assert len(bad.chat_requests()) == 2 and second_metrics["generations_cached"] == 0
    assert first_metrics["generations_cached"] == 0
    # the same server again: every generation comes from the cache, and the count says so
    assert len(good.chat_requests()) == 2
    assert again_metrics["generations_cached"] == len(again) == 2
    assert [r["response"] for r in again] == [GOOD, GOOD]
    summary = (tmp_path / "again" / "summary.md").read_text()
    assert "| is_palindrome | passed | passed | 1/1 | 1/1 | 1 | 0.75 |" in summary
    assert "| two_sum | " in summary and "| 1 |  |" in summary


def test_config_run_and_sweep_folders_are_made_unique():
    hydra = yaml.safe_load((ROOT / "conf" / "config.yaml").read_text())["hydra"]
    assert hydra["run"]["dir"].startswith("${unique_dir:") and hydra["sweep"]["dir"].startswith("${unique_dir:")


def _two_jobs_at_once(tmp: Path, *extra: str, sweep: bool = False) -> None:
    """Start two jobs (each with its own cache, so neither waits for the other) and wait for both."""
    server = FakeOpenAI(models=("coder",), reply=GOOD).start()
    try:
        jobs = [
            subprocess.Popen(
                _command(server, tmp / f"cache{i}", *extra, sweep=sweep),
                cwd=tmp,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for i in range(2)
        ]
        results = [job.communicate(timeout=300) for job in jobs]
    finally:
        server.stop()
    assert [job.returncode for job in jobs] == [0, 0], [err[-2000:] for _, err in results]


def _task_ids(attempts: Path) -> list[str]:
    return sorted(json.loads(line)["task_id"] for line in attempts.read_text().splitlines())


def test_two_jobs_started_at_once_with_one_seed_get_a_folder_each_named_after_model_id(tmp_path):
    # the default folder name without its time, so that both jobs ask for the same folder for certain
    _two_jobs_at_once(tmp_path, "hydra.run.dir=\"${unique_dir:'outputs/same_${model.name}_s${seed}'}\"")
    folders = sorted(p.name for p in (tmp_path / "outputs").iterdir())
    assert folders == ["same_coder_s42", "same_coder_s42-2"]
    for name in folders:
        out = tmp_path / "outputs" / name
        assert _task_ids(out / "attempts.jsonl") == ["is_palindrome", "two_sum"]  # one job's records only
        assert (out / "summary.md").read_text().startswith("## coder (seed 42)")


def test_two_sweeps_started_at_once_get_a_folder_each(tmp_path):
    _two_jobs_at_once(tmp_path, "hydra.sweep.dir=\"${unique_dir:'multirun/same'}\"", "seed=1", sweep=True)
    assert sorted(p.name for p in (tmp_path / "multirun").iterdir()) == ["same", "same-2"]
    for name in ("same", "same-2"):
        assert _task_ids(tmp_path / "multirun" / name / "0_coder_s1" / "attempts.jsonl") == ["is_palindrome", "two_sum"]
