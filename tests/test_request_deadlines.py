"""A server that trickles bytes forever or never answers costs a bounded time, then a backend_error.

Real loopback servers (tests/fake_openai.py, tests/fake_ollama.py); small deadlines keep the tests short.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BackendError, GenerationOptions, make_backend
from tests.fake_ollama import FakeOllama
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = [{"role": "user", "content": "add two numbers"}]
SLACK_S = 1.5  # scheduling on a loaded machine


def _generate(name: str, server, model_id: str, **backend_kw) -> tuple[BackendError, float]:
    url = server.url + ("/v1" if name == "openai" else "")
    backend = make_backend(BackendConfig(name=name, base_url=url, **backend_kw), ModelConfig(name="m", id=model_id))

    async def go() -> BackendError:
        try:
            await backend.generate(MESSAGES, GenerationOptions())
        except BackendError as exc:
            return exc
        finally:
            await backend.aclose()
        raise AssertionError("the hung server gave an answer")

    start = time.monotonic()
    error = asyncio.run(go())
    return error, time.monotonic() - start


@pytest.fixture(params=["openai", "ollama"])
def server(request):
    fake = FakeOpenAI().start() if request.param == "openai" else FakeOllama().start()
    fake.name, fake.model_id = request.param, "qwen2.5-coder-7b" if request.param == "openai" else "gemma3:4b"
    yield fake
    fake.stop()


def test_a_trickling_server_is_cut_off_by_the_request_deadline(server):
    server.queue("trickle", "trickle")
    # every read gets a byte within 50 ms, so only a deadline on the whole request can end it
    error, took = _generate(server.name, server, server.model_id, timeout_s=5.0, request_timeout_s=0.5,
                            retry_total_s=30.0, max_retries=1, retry_backoff_s=0.05)  # fmt: skip
    assert error.kind == "timeout" and "request_timeout_s" in str(error)
    assert "gave up after 2 tries" in str(error)
    assert took < 2 * 0.5 + 0.05 + SLACK_S


def test_retries_of_a_hanging_server_stop_at_the_total_bound(server):
    server.queue(*["hang"] * 20)
    error, took = _generate(server.name, server, server.model_id, timeout_s=0.3, request_timeout_s=10.0,
                            retry_total_s=1.0, max_retries=20, retry_backoff_s=0.05)  # fmt: skip
    assert error.kind == "timeout" and "retry_total_s=1s" in str(error)
    assert took < 1.0 + SLACK_S


def test_defaults_give_up_on_a_hung_server_within_two_minutes():
    cfg = BackendConfig()
    assert cfg.timeout_s <= 60 and cfg.request_timeout_s <= 120 and cfg.retry_total_s <= 120


def test_a_job_against_a_trickling_server_records_backend_error_within_the_bound(tmp_path):
    fake = FakeOpenAI(models=("coder",)).start()
    fake.queue(*["trickle"] * 20)
    try:
        start = time.monotonic()
        job = subprocess.run(
            [sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={fake.url}/v1", "model.id=coder",
             "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py)
             "task_set.ids=[is_palindrome]", "tracking=off", "gold.enabled=false", "sandbox.workers=1",
             "progress=false", "backend.request_timeout_s=1", "backend.retry_total_s=2", "backend.max_retries=5",
             "backend.retry_backoff_s=0.1", f"cache_dir={tmp_path}/cache", f"hydra.run.dir={tmp_path}/run"],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        took = time.monotonic() - start
    finally:
        fake.stop()
    assert job.returncode == 2, job.stderr[-2000:]
    records = [json.loads(line) for line in (tmp_path / "run" / "attempts.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in records] == ["backend_error"]
    assert "retry_total_s=2s" in records[0]["detail"]
    assert took < 60, f"the job took {took:.0f}s"  # start-up included; without the deadline it never ends
