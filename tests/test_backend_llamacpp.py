"""The embedded llama.cpp backend: model.id resolution, and real generation with SmolLM2-135M."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest
import xllamacpp

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BackendError, GenerationOptions, make_backend
from runner.generation.backends.gguf import gguf_digest, resolve_gguf

MESSAGES = [
    {"role": "system", "content": "You write Python functions."},
    {"role": "user", "content": "Write a function add(a, b) that returns the sum of a and b."},
]
OPTIONS = GenerationOptions(temperature=0.0, seed=42, num_predict=48)


def fake_ollama_store(tmp_path, name="tiny", tag="q4", payload=b"GGUF fake"):
    hexdigest = hashlib.sha256(payload).hexdigest()
    blob = tmp_path / "blobs" / f"sha256-{hexdigest}"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(payload)
    manifest = tmp_path / "manifests" / "registry.ollama.ai" / "library" / name / tag
    manifest.parent.mkdir(parents=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{hexdigest}"},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return blob, hexdigest


def test_packaged_smollm2_resolves_without_importing_its_package():
    path = resolve_gguf("smollm2-135m")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
    assert path.read_bytes()[:4] == b"GGUF"


def test_ollama_store_resolution(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_MODELS", str(tmp_path))
    blob, hexdigest = fake_ollama_store(tmp_path)
    assert resolve_gguf("ollama:tiny:q4") == blob
    assert gguf_digest(blob) == f"sha256:{hexdigest}"
    with pytest.raises(BackendError) as info:
        resolve_gguf("ollama:tiny:q8")
    assert info.value.kind == "model_missing" and "ollama pull tiny:q8" in str(info.value)


def test_path_and_unknown_ids(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF123")
    assert resolve_gguf(str(gguf)) == gguf
    assert gguf_digest(gguf) == "sha256:" + hashlib.sha256(b"GGUF123").hexdigest()
    for bad in (str(tmp_path / "absent.gguf"), "gemma3:4b"):
        with pytest.raises(BackendError) as info:
            resolve_gguf(bad)
        assert info.value.kind == "model_missing" and "smollm2-135m" in str(info.value)


def test_unloadable_file_fails_describe(tmp_path):
    gguf = tmp_path / "broken.gguf"
    gguf.write_bytes(b"not a model")
    backend = make_backend(BackendConfig(name="llamacpp", n_threads=2), ModelConfig(name="x", id=str(gguf)))
    with pytest.raises(BackendError) as info:
        asyncio.run(backend.describe())
    assert info.value.kind == "model_missing" and str(gguf) in str(info.value)


@pytest.fixture(scope="module")
def smollm2():
    # one thread: on a busy 2-core machine, 2 llama.cpp threads run 10-30x slower (they wait on each other)
    backend = make_backend(
        BackendConfig(name="llamacpp", n_threads=1), ModelConfig(name="smollm2_135m", id="smollm2-135m", num_ctx=2048)
    )
    yield backend
    asyncio.run(backend.aclose())


@pytest.mark.slow
def test_real_generation_is_deterministic(smollm2):
    async def twice():
        return [await smollm2.generate(MESSAGES, OPTIONS) for _ in range(2)]

    first, second = asyncio.run(twice())
    assert first.text.strip()
    assert 0 < first.completion_tokens <= 48
    assert first.prompt_tokens > 10
    assert first.finish_reason in ("stop", "length")
    assert first.text == second.text
    assert first.completion_tokens == second.completion_tokens


@pytest.mark.slow
def test_concurrent_requests_load_the_model_once_and_agree(monkeypatch):
    loads = []
    real_server = xllamacpp.Server

    def counting_server(params):
        loads.append(params.model.path)
        return real_server(params)

    monkeypatch.setattr(xllamacpp, "Server", counting_server)
    backend = make_backend(BackendConfig(name="llamacpp", n_threads=1), ModelConfig(name="s", id="smollm2-135m"))
    options = GenerationOptions(seed=42, num_predict=16, num_ctx=1024)

    async def together():
        try:
            return await asyncio.gather(*(backend.generate(MESSAGES, options) for _ in range(3)))
        finally:
            await backend.aclose()

    a, b, c = asyncio.run(together())
    assert len(loads) == 1
    assert a.text == b.text == c.text and a.text.strip()


@pytest.mark.slow
def test_num_predict_bounds_the_answer(smollm2):
    gen = asyncio.run(smollm2.generate(MESSAGES, GenerationOptions(seed=42, num_predict=5)))
    assert (gen.completion_tokens, gen.finish_reason) == (5, "length")


@pytest.mark.slow
def test_describe_fingerprints_the_gguf(smollm2):
    info = asyncio.run(smollm2.describe())
    path = resolve_gguf("smollm2-135m")
    assert info["backend"] == "llamacpp"
    assert info["model"] == str(path)
    assert info["server_version"] == f"xllamacpp {xllamacpp.__version__}"
    assert info["model_digest"] == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert info["threads"] == str(smollm2.threads_in_use) and smollm2.threads_in_use >= 1


@pytest.mark.slow
def test_prompt_longer_than_context_is_bad_request(smollm2):
    long = [{"role": "user", "content": "word " * 400}]
    with pytest.raises(BackendError) as info:
        asyncio.run(smollm2.generate(long, GenerationOptions(seed=42, num_ctx=128, num_predict=8)))
    assert info.value.kind == "bad_request" and not info.value.transient
    assert "context" in str(info.value)


@pytest.mark.slow
def test_a_prefilled_answer_is_continued(smollm2):
    from runner.generation.extract import extract
    from runner.generation.prompts import answer_prefix, answer_text

    prefix = "Here is the code:\n```python\ndef add(a, b):\n    return"
    messages = [*MESSAGES, {"role": "assistant", "content": prefix}]
    generation = asyncio.run(smollm2.generate(messages, OPTIONS))
    answer = answer_text(messages, generation.text)
    assert answer_prefix(messages) == prefix and answer.startswith(prefix)
    assert answer.count(prefix) == 1  # llama.cpp echoes the prefill; it is not put in front twice
    assert generation.prompt_tokens > asyncio.run(smollm2.generate(MESSAGES, OPTIONS)).prompt_tokens
    assert extract(answer, "add").code.startswith("def add(a, b):\n    return")


@pytest.mark.slow
def test_a_cancelled_generation_stops_at_its_next_token(smollm2):
    """Ctrl-C or SIGTERM cancels the request's task: the worker thread must not run the answer to its end."""
    import time

    long_answer = GenerationOptions(seed=42, num_predict=1500, num_ctx=2048)
    story = [{"role": "user", "content": "Write a very long story about a lighthouse keeper, chapter by chapter."}]

    async def cancel_midway() -> tuple[float, float]:
        whole_start = time.perf_counter()
        await smollm2.generate(story, GenerationOptions(seed=42, num_predict=200, num_ctx=2048))
        per_200 = time.perf_counter() - whole_start  # the time of 200 tokens: 1500 would take 7 times as long
        task = asyncio.create_task(smollm2.generate(story, long_answer))
        await asyncio.sleep(0.5)
        task.cancel()
        stop_start = time.perf_counter()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.to_thread(lambda: smollm2._threads.submit(int).result())  # one slot: after the generation
        return per_200, time.perf_counter() - stop_start

    per_200, stopped_in = asyncio.run(cancel_midway())
    assert stopped_in < min(2.0, per_200), (stopped_in, per_200)


@pytest.mark.slow
def test_ngram_speculation_drafts_from_the_prompt_and_keeps_the_models_answer():
    """backend.speculative=ngram: the copied lines are drafted and accepted, the greedy text is the model's own,
    and the identity (the generation key, the run's tag) says speculation was on."""
    lines = "\n".join(f"line {i}: the quick brown fox jumps over the lazy dog number {i}" for i in range(6))
    messages = [
        {"role": "user", "content": f"Repeat this text exactly, nothing else:\n\n{lines}"},
        {"role": "assistant", "content": "line 0: the quick brown fox jumps over the lazy dog number 0\nline 1:"},
    ]
    options = GenerationOptions(seed=42, num_predict=80, num_ctx=1024)

    async def answer(speculative: str):
        config = BackendConfig(name="llamacpp", n_threads=1, max_concurrency=1, speculative=speculative)
        backend = make_backend(config, ModelConfig(name="s", id="smollm2-135m"))
        try:
            return await backend.generate(messages, options), await backend.describe()
        finally:
            await backend.aclose()

    (plain, plain_identity), (drafted, drafted_identity) = asyncio.run(answer("none")), asyncio.run(answer("ngram"))
    assert "line 3: the quick brown fox" in plain.text
    assert drafted.text == plain.text and drafted.completion_tokens == plain.completion_tokens
    assert drafted.raw["timings"]["draft_n_accepted"] > 20, drafted.raw["timings"]
    assert "draft_n" not in plain.raw["timings"]
    assert "speculative" not in plain_identity  # keys of jobs without speculation are unchanged
    assert drafted_identity["speculative"].startswith("ngram-simple")
