"""Server backends' identity (the generation key's model part) holds the requests in flight, as the embedded
backend's holds its slots: a server that batches concurrent requests can answer a greedy request differently."""

from __future__ import annotations

import asyncio

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import make_backend
from tests.fake_ollama import FakeOllama
from tests.fake_openai import FakeOpenAI

SERVERS = {  # backend name: (loopback server, how its URL is given, a model it serves)
    "ollama": (FakeOllama, "", "gemma3:4b"),
    "openai": (FakeOpenAI, "/v1", "qwen2.5-coder-7b"),
}


def identity(name: str, url: str, model_id: str, max_concurrency: int) -> dict[str, str]:
    backend = make_backend(
        BackendConfig(name=name, base_url=url, max_concurrency=max_concurrency, timeout_s=5.0),
        ModelConfig(name="m", id=model_id),
    )

    async def go():
        try:
            return await backend.describe()
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_the_identity_differs_by_the_requests_in_flight_and_by_nothing_else(name):
    server_class, suffix, model_id = SERVERS[name]
    server = server_class().start()
    try:
        one, four = (identity(name, server.url + suffix, model_id, n) for n in (1, 4))
    finally:
        server.stop()
    assert (one["in_flight"], four["in_flight"]) == ("1", "4")
    assert {k: v for k, v in one.items() if k != "in_flight"} == {k: v for k, v in four.items() if k != "in_flight"}
