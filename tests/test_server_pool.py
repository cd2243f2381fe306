"""A `backend.base_url` list: requests spread over real loopback servers, and a server that dies mid-run.

The servers are tests/fake_openai.py and tests/fake_ollama.py on 127.0.0.1; `kill` closes a server's port
and cuts its open connections, as a crashed server does.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BackendError, GenerationOptions, make_backend
from runner.generation.backends.openai import OpenAIBackend
from runner.generation.backends.server_pool import ServerPool
from runner.validation import ConfigError
from tests.conftest import typed_test_config
from tests.fake_ollama import FakeOllama
from tests.fake_openai import FakeOpenAI
from tests.test_backend_openai import run

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-7b"
MESSAGES = [{"role": "user", "content": "add two numbers"}]


@pytest.fixture
def servers():
    started = [FakeOpenAI(models=(MODEL,)).start() for _ in range(2)]
    yield started
    for server in started:
        server.stop()


def pool(urls: list[str], name: str = "openai", model: str = MODEL, **backend_kw):
    settings = {"timeout_s": 5.0, "max_retries": 1, "retry_backoff_s": 0.01, "max_concurrency": 2, **backend_kw}
    return make_backend(BackendConfig(name=name, base_url=urls, **settings), ModelConfig(name="m", id=model))


def openai_urls(servers: list[FakeOpenAI]) -> list[str]:
    return [f"{s.url}/v1" for s in servers]


def generate_all(backend, count: int, at_once: int | None = None):
    """`count` generations with distinct seeds, at most `at_once` in flight (None: all at once)."""

    async def go():
        slots = asyncio.Semaphore(at_once or count)

        async def one(seed: int):
            async with slots:
                return await backend.generate(MESSAGES, GenerationOptions(seed=seed))

        try:
            await backend.describe()
            return await asyncio.gather(*(one(seed) for seed in range(count)), return_exceptions=True)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_a_single_url_or_a_one_element_list_is_the_plain_backend(servers):
    assert isinstance(pool([openai_urls(servers)[0]]), OpenAIBackend)
    assert isinstance(pool(openai_urls(servers)), ServerPool)


def test_no_server_gets_more_than_max_concurrency_and_both_are_used(servers):
    for server in servers:
        server.delay_s = 0.2
    results = generate_all(pool(openai_urls(servers), max_concurrency=2), 12)
    assert all(not isinstance(r, BaseException) for r in results), results
    assert [s.max_in_flight for s in servers] == [2, 2]
    assert [s.generations for s in servers] == [6, 6]
    assert {r.server for r in results} == set(openai_urls(servers))


def test_requests_go_to_the_server_with_fewest_outstanding(servers):
    """Least outstanding, not round robin: the fast server, free again first, takes most of the requests."""
    slow, fast = servers
    slow.delay_s, fast.delay_s = 2.0, 0.02
    results = generate_all(pool(openai_urls(servers), max_concurrency=4), 20, at_once=2)
    assert all(not isinstance(r, BaseException) for r in results), results
    assert slow.generations <= 4 and fast.generations >= 16, (slow.generations, fast.generations)  # not 10/10


def test_a_server_killed_mid_run_loses_no_request(servers):
    dying, steady = servers
    for server in servers:
        server.delay_s = 0.1
    dying.die_after = 3
    results = generate_all(pool(openai_urls(servers)), 16)
    assert all(not isinstance(r, BaseException) for r in results), results
    assert dying.killed.is_set()
    answered = [r.server for r in results]
    before_death = answered.count(openai_urls(servers)[0])  # a request in flight when it died went elsewhere
    assert 1 <= before_death <= 3
    assert answered.count(openai_urls(servers)[1]) == 16 - before_death == steady.generations


def test_an_ollama_server_killed_mid_run_loses_no_request():
    servers = [FakeOllama().start() for _ in range(2)]
    try:
        servers[0].delay_s = servers[1].delay_s = 0.1
        servers[0].die_after = 2
        results = generate_all(pool([s.url for s in servers], name="ollama", model="gemma3:4b"), 10)
    finally:
        for server in servers:
            server.stop()
    assert all(not isinstance(r, BaseException) for r in results), results
    assert 1 <= [r.server for r in results].count(servers[0].url) <= 2 and servers[0].killed.is_set()


@pytest.mark.parametrize("failure", ["hang", "500"])
def test_a_server_that_hangs_or_fails_hands_its_request_on(servers, failure):
    servers[0].queue(failure, failure)  # both tries of the first request sent to it (max_retries=1)
    [generation] = generate_all(pool(openai_urls(servers), request_timeout_s=0.5, retry_total_s=5), 1)
    assert not isinstance(generation, BaseException), generation
    assert generation.server == openai_urls(servers)[1] and servers[0].generations == 2


def test_when_every_server_is_gone_the_request_fails_as_a_backend_error(servers):
    for server in servers:
        server.die_after = 0
    [err] = generate_all(pool(openai_urls(servers)), 1)
    assert isinstance(err, BackendError) and err.kind in ("unreachable", "broken_stream")
    assert "every server of backend.base_url failed" in str(err)
    assert all(url in str(err) for url in openai_urls(servers))


def test_a_bad_request_is_not_sent_to_the_next_server(servers):
    """A 400 is the request's fault: every server would reject it, so it fails at once."""
    servers[0].queue("400")
    servers[1].queue("400")
    [err] = generate_all(pool(openai_urls(servers)), 1)
    assert isinstance(err, BackendError) and err.kind == "bad_request"
    assert sum(s.generations for s in servers) == 1


def test_a_server_taken_out_is_probed_and_comes_back(servers):
    flaky, steady = servers
    flaky.queue("503", "503")  # the first request's two tries on it (max_retries=1)

    async def go():
        backend = pool(openai_urls(servers), max_concurrency=1, probe_after_s=0.2)
        try:
            await backend.describe()
            first = await backend.generate(MESSAGES, GenerationOptions(seed=0))
            await asyncio.sleep(0.3)
            await backend.generate(MESSAGES, GenerationOptions(seed=1))  # starts the probe
            await asyncio.sleep(0.3)
            later = await asyncio.gather(*(backend.generate(MESSAGES, GenerationOptions(seed=s)) for s in range(4)))
            return first, later
        finally:
            await backend.aclose()

    first, later = asyncio.run(go())
    assert first.server == openai_urls(servers)[1]
    assert openai_urls(servers)[0] in {g.server for g in later}, "the server did not come back"


def test_servers_with_different_models_stop_the_job_at_start_up(servers):
    servers[1].created = 1600000000  # another /models entry: other weights behind the same name
    with pytest.raises(BackendError) as info:
        generate_all(pool(openai_urls(servers)), 1)
    message = str(info.value)
    assert info.value.kind == "config" and "\n" not in message
    theirs = describe(pool([f"{servers[1].url}/v1"]))["model_digest"]
    assert f"{servers[1].url}/v1 reports model_digest={theirs!r}, " in message and "backend.base_url" in message


def test_a_job_on_servers_with_different_models_stops_in_one_line(servers, tmp_path):
    servers[1].created = 1600000000
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "backend=openai", f"backend.base_url=[{','.join(openai_urls(servers))}]",
         f"model.id={MODEL}", "tracking=off", f"cache_dir={tmp_path}/cache", f"hydra.run.dir={tmp_path}/job"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode != 0 and not servers[0].chat_requests() and not servers[1].chat_requests()
    said = proc.stdout + proc.stderr
    [line] = [text for text in said.splitlines() if "serve different models" in text]
    assert "Traceback" not in said and line.endswith(f"drop {servers[1].url}/v1 from backend.base_url")


def test_the_identity_lists_every_server_and_a_server_down_at_start_up_is_left_out(servers):
    async def go():
        backend = pool(openai_urls(servers))
        try:
            identity = await backend.describe()
            servers[1].kill()
            return identity, await backend.generate(MESSAGES, GenerationOptions())
        finally:
            await backend.aclose()

    identity, generation = asyncio.run(go())
    assert identity["base_url"] == ", ".join(sorted(openai_urls(servers)))
    assert generation.server == openai_urls(servers)[0]


def test_base_url_takes_a_string_or_a_list_of_distinct_urls():
    assert typed_test_config(["backend=openai", "backend.base_url=http://a:8000/v1"]).backend.base_url == (
        "http://a:8000/v1"
    )
    listed = typed_test_config(["backend=openai", "backend.base_url=[http://a:8000/v1,http://b:8000/v1]"])
    assert listed.backend.base_url == ["http://a:8000/v1", "http://b:8000/v1"]
    for override, said in [
        (["backend=openai", "backend.base_url=[http://a/v1,http://a/v1/]"], "a list of distinct URLs"),
        (["backend=openai", "backend.base_url=[]"], "a list of distinct URLs"),
        (["backend=llamacpp", "backend.base_url=[http://a,http://b]"], "a list needs backend=ollama or openai"),
    ]:
        with pytest.raises(ConfigError, match=said):
            typed_test_config(override)


def test_a_job_on_two_servers_one_killed_mid_run_records_every_attempt(servers, tmp_path):
    """A real job (`python -m runner`, real sandbox and MLflow store): every sample passes, both servers answer."""
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "add.yaml").write_text((ROOT / "tests" / "fixtures" / "tasks" / "good.yaml").read_text())
    dying = servers[0]
    for server in servers:
        server.delay_s = 0.3
    dying.die_after = 4
    urls = openai_urls(servers)
    out = tmp_path / "job"
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "backend=openai", f"backend.base_url=[{','.join(urls)}]",
         "backend.max_concurrency=2", "backend.max_retries=1", "backend.retry_backoff_s=0.05",
         f"model.id={MODEL}", "model.name=fake", f"task_set.path={tasks}", "sampling.n=16",
         "sampling.temperature=0.7", "repair.max_repairs=0", "sandbox.workers=1", "progress=false",
         f"tracking.uri=sqlite:///{tmp_path}/store/mlflow.db", f"tracking.artifact_root={tmp_path}/store/artifacts",
         f"cache_dir={tmp_path}/cache", f"hydra.run.dir={out}"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert sorted(r["sample"] for r in records) == list(range(16))
    assert {r["outcome"] for r in records} == {"passed"}
    answered = [r["server"] for r in records]
    assert 1 <= answered.count(urls[0]) <= 4 and dying.killed.is_set()
    assert answered.count(urls[1]) == 16 - answered.count(urls[0])
    assert [s.max_in_flight for s in servers] == [2, 2]  # two per server, four at once in all
    for r in records:  # the test log of each attempt (an MLflow artifact) names the server too
        log = (out / "attempts" / "add" / f"{r['sample']}_0" / "test_log.txt").read_text()
        assert f"server: {r['server']}" in log


def describe(backend) -> dict[str, str]:
    return run(backend, lambda b: b.describe())


def test_the_generation_key_follows_the_model_not_the_order_of_the_servers(servers):
    """The identity (the generation cache key's model part) is the same for any order of the same servers;
    OpenAI-compatible: another set of servers is another key, as another single URL is."""
    a, b = openai_urls(servers)
    both = describe(pool([a, b]))
    assert both == describe(pool([b, a]))
    assert both != describe(pool([a])) and both["model_digest"] == describe(pool([a]))["model_digest"]
    ollamas = [FakeOllama().start() for _ in range(2)]
    try:
        urls = [s.url for s in ollamas]
        spread = describe(pool(urls, name="ollama", model="gemma3:4b"))
        assert spread == describe(pool(urls[:1], name="ollama", model="gemma3:4b"))  # the digest names the weights
    finally:
        for server in ollamas:
            server.stop()
