"""The ollama backend against a real loopback server speaking the Ollama API (tests/fake_ollama.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BackendError, GenerationOptions, make_backend
from tests.fake_ollama import REPLY, FakeOllama

MESSAGES = [{"role": "system", "content": "Write Python."}, {"role": "user", "content": "add two numbers"}]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake():
    server = FakeOllama().start()
    yield server
    server.stop()


def ollama(url: str, model_id: str = "gemma3:4b", think: bool | None = None, **backend_kw):
    backend_kw = {"timeout_s": 5.0, "max_retries": 2, "retry_backoff_s": 0.01, **backend_kw}
    return make_backend(
        BackendConfig(name="ollama", base_url=url, **backend_kw), ModelConfig(name="m", id=model_id, think=think)
    )


def generate(backend, options: GenerationOptions | None = None, messages=MESSAGES):
    async def go():
        try:
            return await backend.generate(messages, options or GenerationOptions())
        finally:
            await backend.aclose()

    return asyncio.run(go())


def describe(backend):
    async def go():
        try:
            return await backend.describe()
        finally:
            await backend.aclose()

    return asyncio.run(go())


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_options_reach_the_server(fake):
    options = GenerationOptions(
        temperature=0.3, top_p=0.9, seed=7, num_ctx=2048, num_predict=100, stop=("```", "\n\n"),
        think=True, keep_alive="10m",
    )  # fmt: skip
    gen = generate(ollama(fake.url), options)
    [body] = fake.chat_bodies()
    assert body["model"] == "gemma3:4b"
    assert body["messages"] == MESSAGES
    assert body["stream"] is True
    assert body["options"] == {
        "temperature": 0.3, "top_p": 0.9, "seed": 7, "num_ctx": 2048, "num_predict": 100, "stop": ["```", "\n\n"],
    }  # fmt: skip
    assert body["think"] is True
    assert body["keep_alive"] == "10m"
    assert gen.raw["echo"] == body  # the server's final line echoes what it received
    # reasoning is kept out of the text but kept in raw
    assert gen.text == "".join(REPLY)
    assert gen.raw["message"]["thinking"] == "Let me think."


def test_unset_options_fall_back_to_config_or_are_left_out(fake):
    generate(ollama(fake.url, think=False, keep_alive="7m"), GenerationOptions())
    [body] = fake.chat_bodies()
    assert body["think"] is False  # model.think
    assert body["keep_alive"] == "7m"  # backend.keep_alive
    assert "seed" not in body["options"] and "stop" not in body["options"]


def test_think_is_omitted_when_nobody_sets_it(fake):
    gen = generate(ollama(fake.url), GenerationOptions(seed=0))
    [body] = fake.chat_bodies()
    assert "think" not in body
    assert body["options"]["seed"] == 0
    assert "thinking" not in gen.raw["message"]


def test_token_counts_and_finish_reason(fake):
    full = generate(ollama(fake.url), GenerationOptions(num_predict=100))
    assert (full.text, full.finish_reason) == ("".join(REPLY), "stop")
    assert full.completion_tokens == len(REPLY)
    assert full.prompt_tokens == 5  # words in MESSAGES, as counted by the fake
    assert full.duration_s > 0
    cut = generate(ollama(fake.url), GenerationOptions(num_predict=3))
    assert (cut.text, cut.finish_reason, cut.completion_tokens) == ("def add(a,", "length", 3)


def test_describe_reports_version_and_digest(fake):
    info = describe(ollama(fake.url))
    assert info == {
        "backend": "ollama",
        "server_version": "0.9.9-fake",
        "model": "gemma3:4b",
        "model_digest": "sha256:" + "ab" * 32,
        "in_flight": "1",
    }
    assert fake.paths() == ["/api/version", "/api/show", "/api/tags"]
    assert describe(ollama(fake.url, max_concurrency=4))["in_flight"] == "4"  # batched answers: another key


def test_describe_matches_an_untagged_name_to_latest(fake):
    fake.models["llama3:latest"] = "cd" * 32
    assert describe(ollama(fake.url, model_id="llama3"))["model_digest"] == "sha256:" + "cd" * 32


def test_missing_model_fails_describe_with_pull_hint(fake):
    with pytest.raises(BackendError) as info:
        describe(ollama(fake.url, model_id="nope:1b"))
    assert info.value.kind == "model_missing"
    assert "ollama pull nope:1b" in str(info.value)
    assert info.value.transient is False


def test_missing_model_fails_generate_at_once(fake):
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, model_id="nope:1b"))
    assert info.value.kind == "model_missing"
    assert "ollama pull nope:1b" in str(info.value)
    assert len(fake.chat_bodies()) == 1  # not retried


def test_unreachable_server_says_start_ollama():
    url = closed_port_url()
    with pytest.raises(BackendError) as info:
        describe(ollama(url))
    assert info.value.kind == "unreachable"
    assert "ollama serve" in str(info.value) and url in str(info.value)


def test_unreachable_during_generate_is_retried_then_raised():
    with pytest.raises(BackendError) as info:
        generate(ollama(closed_port_url(), max_retries=2))
    assert info.value.kind == "unreachable" and info.value.transient
    assert "gave up after 3 tries" in str(info.value)


@pytest.mark.parametrize("failures", [["500"], ["503"], ["500", "503"]])
def test_transient_statuses_are_retried_then_succeed(fake, failures):
    fake.queue(*failures)
    gen = generate(ollama(fake.url, max_retries=2))
    assert gen.text == "".join(REPLY)
    assert len(fake.chat_bodies()) == len(failures) + 1


def test_retries_stop_at_max_retries(fake):
    fake.queue("500", "500", "500", "500")
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, max_retries=1))
    assert info.value.kind == "server_error" and info.value.transient
    assert "llama runner process has terminated" in str(info.value)
    assert len(fake.chat_bodies()) == 2


def test_503_is_unavailable(fake):
    fake.queue("503")
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, max_retries=0))
    assert info.value.kind == "unavailable" and info.value.transient


def test_think_on_a_model_without_thinking_says_what_to_change(fake):
    fake.no_think.add("gemma3:4b")
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, think=True))
    assert info.value.kind == "bad_request" and "model.think=false" in str(info.value)
    assert len(fake.chat_bodies()) == 1


def test_bad_request_is_not_retried(fake):
    fake.queue("400")
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, max_retries=3))
    assert info.value.kind == "bad_request" and not info.value.transient
    assert "invalid options" in str(info.value)
    assert len(fake.chat_bodies()) == 1


@pytest.mark.parametrize("behaviour", ["cut", "cut_chunked"])
def test_stream_cut_midway_is_broken_stream(fake, behaviour):
    fake.queue(behaviour, behaviour)
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, max_retries=1))
    assert info.value.kind == "broken_stream" and info.value.transient
    assert len(fake.chat_bodies()) == 2


def test_broken_stream_then_success(fake):
    fake.queue("cut")
    gen = generate(ollama(fake.url, max_retries=1))
    assert gen.text == "".join(REPLY) and gen.finish_reason == "stop"


def test_error_line_midstream_is_error_body(fake):
    fake.queue("error_line")
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, max_retries=3))
    assert info.value.kind == "error_body"
    assert "unexpected EOF" in str(info.value)
    assert len(fake.chat_bodies()) == 1


def test_slow_server_times_out(fake):
    fake.slow_s = 1.5
    fake.queue("slow", "slow")
    start = time.perf_counter()
    with pytest.raises(BackendError) as info:
        generate(ollama(fake.url, timeout_s=0.2, max_retries=1))
    assert info.value.kind == "timeout" and info.value.transient
    assert "backend.timeout_s" in str(info.value)
    assert len(fake.chat_bodies()) == 2
    assert time.perf_counter() - start < 1.4  # gave up long before the server answered


def test_timeout_then_success(fake):
    fake.slow_s = 1.0
    fake.queue("slow")
    gen = generate(ollama(fake.url, timeout_s=0.3, max_retries=1))
    assert gen.finish_reason == "stop"


@pytest.mark.parametrize(("parallel", "named"), [(1, True), (4, False)])
def test_a_server_that_queues_the_requests_in_flight_is_named_once(fake, caplog, parallel, named):
    """4 requests at once on a server that answers one at a time (OLLAMA_NUM_PARALLEL=1): the last waits
    1.2 s in its queue, and one warning says what to set; a server that answers all 4 at once is not named."""
    fake.parallel, fake.answer_s = parallel, 0.4
    backend = ollama(fake.url, max_concurrency=4)

    async def go():
        try:
            return await asyncio.gather(*(backend.generate(MESSAGES, GenerationOptions()) for _ in range(4)))
        finally:
            await backend.aclose()

    with caplog.at_level(logging.WARNING, logger="runner.generation.backends.ollama"):
        answers = asyncio.run(go())
    assert [a.text for a in answers] == ["".join(REPLY)] * 4
    said = [r.getMessage() for r in caplog.records if "in its queue" in r.getMessage()]
    assert len(said) == (1 if named else 0)
    assert not named or (fake.url in said[0] and "start it with OLLAMA_NUM_PARALLEL=4" in said[0])


def test_a_request_timed_out_in_the_servers_queue_says_what_to_set(fake):
    """Ollama sends nothing while a request waits for a slot: with 2 in flight on a one-slot server the second
    gets its first byte after 1 s, past backend.timeout_s, and its error names OLLAMA_NUM_PARALLEL."""
    fake.parallel, fake.answer_s = 1, 0.5
    backend = ollama(fake.url, max_concurrency=2, timeout_s=0.8, max_retries=0)

    async def go():
        try:
            calls = (backend.generate(MESSAGES, GenerationOptions()) for _ in range(2))
            return await asyncio.gather(*calls, return_exceptions=True)
        finally:
            await backend.aclose()

    errors = [r for r in asyncio.run(go()) if isinstance(r, BaseException)]
    assert errors and all(isinstance(e, BackendError) and e.kind == "timeout" for e in errors)
    assert "backend.timeout_s" in str(errors[-1]) and "start it with OLLAMA_NUM_PARALLEL=2" in str(errors[-1])


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most (start, end) spans open at one instant; one that ends as another starts does not overlap it."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    open_now = most = 0
    for _, step in events:
        open_now += step
        most = max(most, open_now)
    return most


def test_most_at_once_counts_overlapping_spans():
    assert most_at_once([(0, 1), (1, 2), (2, 3)]) == 1
    assert most_at_once([(0, 3), (1, 2), (1.5, 4), (3.5, 5)]) == 3


def ollama_job(tmp: Path, server: FakeOllama, name: str, *extra: str) -> tuple[dict, dict]:
    """A real `python -m runner` job of 8 samples of one task on `server`; its run.json tags and summary."""
    tasks = tmp / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "add.yaml").write_text((ROOT / "tests" / "fixtures" / "tasks" / "good.yaml").read_text())
    out = tmp / name
    proc = subprocess.run(
        [sys.executable, "-m", "runner", "backend=ollama", f"backend.base_url={server.url}", "model=gemma3_4b",
         "model.id=gemma3:4b", "model.name=fake", f"task_set.path={tasks}", "sampling.n=8",
         "sampling.temperature=0.7", "repair.max_repairs=0", "sandbox.workers=1", "progress=false",
         "tracking=off", f"cache_dir={tmp}/cache", f"hydra.run.dir={out}", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "run.json").read_text())["tags"], json.loads((out / "summary.json").read_text())


def test_a_job_keeps_max_concurrency_requests_in_flight_and_keys_its_answers_by_it(fake, tmp_path):
    """backend=ollama sends 4 requests at once by default (the server sees them overlap, never more than 4);
    max_concurrency=1 sends them one after another. The number in flight is on the run and in the generation
    key: the unbatched job generates again instead of reusing the batched answers, a batched job reuses them."""
    fake.delay_s = 0.25  # each answer takes this long at the server
    tags, summary = ollama_job(tmp_path, fake, "batched")
    batched = list(fake.spans)
    assert len(batched) == 8 and most_at_once(batched) == 4 == fake.max_in_flight
    assert tags["backend_in_flight"] == "4" and summary["generations_cached"] == 0

    tags, summary = ollama_job(tmp_path, fake, "unbatched", "backend.max_concurrency=1")
    unbatched = fake.spans[8:]
    assert len(unbatched) == 8 and most_at_once(unbatched) == 1
    assert tags["backend_in_flight"] == "1" and summary["generations_cached"] == 0

    tags, summary = ollama_job(tmp_path, fake, "again", "backend.max_concurrency=4")
    assert len(fake.spans) == 16 and summary["generations_cached"] == 8  # the batched job's answers
    assert tags["backend_in_flight"] == "4"
