"""The openai backend against a real loopback OpenAI-compatible server (tests/fake_openai.py)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BackendError, GenerationOptions, make_backend
from runner.generation.backends.openai import models_entry_digest
from tests.fake_ollama import REPLY
from tests.fake_openai import FakeOpenAI

MESSAGES = [{"role": "user", "content": "add two numbers"}]
KEY_ENV = "RUNNER_TEST_OPENAI_KEY"


@pytest.fixture
def fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def openai(url: str, model_id: str = "qwen2.5-coder-7b", **backend_kw):
    backend_kw = {"timeout_s": 5.0, "max_retries": 2, "retry_backoff_s": 0.01, "api_key_env": KEY_ENV, **backend_kw}
    return make_backend(BackendConfig(name="openai", base_url=url, **backend_kw), ModelConfig(name="m", id=model_id))


def run(backend, call):
    async def go():
        try:
            return await call(backend)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def generate(backend, options: GenerationOptions | None = None):
    return run(backend, lambda b: b.generate(MESSAGES, options or GenerationOptions()))


def test_options_and_key_reach_the_server(fake, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-secret")
    options = GenerationOptions(temperature=0.2, top_p=0.8, seed=3, num_predict=100, stop=("```",))
    gen = generate(openai(fake.url + "/v1/"), options)
    [request] = fake.chat_requests()
    body = request["body"]
    assert {k: body[k] for k in ("model", "messages", "max_tokens", "temperature", "top_p", "seed", "stop")} == {
        "model": "qwen2.5-coder-7b", "messages": MESSAGES, "max_tokens": 100, "temperature": 0.2, "top_p": 0.8,
        "seed": 3, "stop": ["```"],
    }  # fmt: skip
    assert request["headers"]["Authorization"] == "Bearer sk-test-secret"
    assert gen.raw["echo"] == body
    assert (gen.text, gen.finish_reason, gen.prompt_tokens, gen.completion_tokens) == ("".join(REPLY), "stop", 11, 9)


def test_no_key_no_header_and_unset_options_left_out(fake, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    generate(openai(fake.url + "/v1"))
    [request] = fake.chat_requests()
    assert "Authorization" not in request["headers"]
    assert "seed" not in request["body"] and "stop" not in request["body"]


def test_length_finish_reason(fake):
    gen = generate(openai(fake.url + "/v1"), GenerationOptions(num_predict=2))
    assert (gen.text, gen.finish_reason, gen.completion_tokens) == ("def add", "length", 2)


def test_describe_lists_model(fake):
    info = run(openai(fake.url + "/v1"), lambda b: b.describe())
    assert info["backend"] == "openai" and info["model"] == "qwen2.5-coder-7b"
    assert fake.paths() == ["/v1/models"]


def test_identity_holds_the_server_and_a_fingerprint_of_its_models_entry(fake):
    other = FakeOpenAI(created=1700000999).start()
    try:
        first = run(openai(fake.url + "/v1"), lambda b: b.describe())
        same_entry_elsewhere = run(openai(other.url + "/v1"), lambda b: b.describe())
    finally:
        other.stop()
    assert first["base_url"] == fake.url + "/v1" and first["model_digest"].startswith("models-entry-sha256:")
    assert first["model_digest"] != same_entry_elsewhere["model_digest"]  # new weights behind the same id
    assert first != same_entry_elsewhere


def test_models_entry_digest_prefers_the_servers_own_digest_and_ignores_request_time_fields():
    assert models_entry_digest({"id": "m", "digest": "sha256:ab"}) == "sha256:ab"
    now = 1800000000
    vllm_then = {"id": "m", "created": now, "root": "/w", "permission": [{"id": "modelperm-1", "created": now}]}
    vllm_later = {"id": "m", "created": now + 60, "root": "/w", "permission": [{"id": "modelperm-2"}]}
    assert models_entry_digest(vllm_then, now=now) == models_entry_digest(vllm_later, now=now + 60)
    assert models_entry_digest({"id": "m", "root": "/w"}) != models_entry_digest({"id": "m", "root": "/v"})
    pulled = {"id": "m", "created": now - 86400}  # Ollama: the time the weights were pulled
    assert models_entry_digest(pulled, now=now) != models_entry_digest({"id": "m", "created": now - 3600}, now=now)


def test_describe_unknown_model_lists_available_ids(fake):
    with pytest.raises(BackendError) as info:
        run(openai(fake.url + "/v1", model_id="gpt-9"), lambda b: b.describe())
    assert info.value.kind == "model_missing"
    assert "gpt-9" in str(info.value) and "qwen2.5-coder-7b" in str(info.value)


def test_generate_unknown_model_is_model_missing_and_not_retried(fake):
    with pytest.raises(BackendError) as info:
        generate(openai(fake.url + "/v1", model_id="gpt-9"))
    assert info.value.kind == "model_missing" and not info.value.transient
    assert len(fake.chat_requests()) == 1


def test_503_and_500_are_retried(fake):
    fake.queue("503", "500")
    assert generate(openai(fake.url + "/v1")).text == "".join(REPLY)
    assert len(fake.chat_requests()) == 3


def test_400_is_not_retried(fake):
    fake.queue("400")
    with pytest.raises(BackendError) as info:
        generate(openai(fake.url + "/v1"))
    assert info.value.kind == "bad_request"
    assert len(fake.chat_requests()) == 1


def test_timeout(fake):
    fake.slow_s = 1.0
    fake.queue("slow")
    with pytest.raises(BackendError) as info:
        generate(openai(fake.url + "/v1", timeout_s=0.2, max_retries=0))
    assert info.value.kind == "timeout"


def test_unreachable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BackendError) as info:
        run(openai(f"http://127.0.0.1:{port}/v1"), lambda b: b.describe())
    assert info.value.kind == "unreachable" and "backend.base_url" in str(info.value)
