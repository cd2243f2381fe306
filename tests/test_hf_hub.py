"""hf: model ids: fetched once from a Hub (a real loopback server through HF_ENDPOINT), then from the HF cache."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runner.generation.backends import BackendError
from runner.generation.backends.gguf import resolve_gguf
from runner.generation.backends.hf_hub import PROXY_VARIABLES, endpoint_refuses, parse_hub_id
from tests.fake_hf_hub import FakeHub

REPO_FILE = "Qwen/Tiny-GGUF/tiny-q4_k_m.gguf"
MODEL_ID = f"hf:{REPO_FILE}"
BLOB = b"GGUF" + bytes(range(256)) * 16  # a small fake GGUF file
SHA = hashlib.sha256(BLOB).hexdigest()
RESOLVE = "/Qwen/Tiny-GGUF/resolve/main/tiny-q4_k_m.gguf"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    server = FakeHub({REPO_FILE: BLOB}).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield server
    server.stop()


def test_parse_hub_id():
    assert parse_hub_id(MODEL_ID) == ("Qwen/Tiny-GGUF", "tiny-q4_k_m.gguf", "main")
    assert parse_hub_id(MODEL_ID + "@v1") == ("Qwen/Tiny-GGUF", "tiny-q4_k_m.gguf", "v1")
    with pytest.raises(BackendError) as info:
        parse_hub_id("hf:Qwen/only-a-repo")
    assert info.value.kind == "config" and "hf:OWNER/REPO/FILE.gguf" in str(info.value)


def test_first_use_downloads_second_use_is_a_cache_hit(hub, tmp_path):
    path = resolve_gguf(MODEL_ID, SHA)
    assert path.read_bytes() == BLOB
    assert path.is_relative_to(tmp_path / "hf" / "hub")
    assert hub.resolves() == [("HEAD", RESOLVE), ("GET", RESOLVE)]
    seen = len(hub.requests)
    assert resolve_gguf(MODEL_ID, f"sha256:{SHA.upper()}") == path
    assert len(hub.requests) == seen  # no request at all: found in the HF cache


def test_checksum_mismatch_fails_with_one_line_and_keeps_nothing(hub, tmp_path):
    wrong = "0" * 64
    with pytest.raises(BackendError) as info:
        resolve_gguf(MODEL_ID, wrong)
    message = str(info.value)
    assert info.value.kind == "model_missing" and "\n" not in message
    assert SHA in message and wrong in message and "model.sha256" in message
    assert not [p for p in (tmp_path / "hf").rglob("*.gguf") if p.exists()]
    assert not list((tmp_path / "hf").rglob(f"blobs/{SHA}"))


def test_a_mirror_that_lies_about_the_hash_is_caught(tmp_path, monkeypatch):
    """The ETag names the pinned hash but the content differs: the content is what is checked."""
    server = FakeHub({REPO_FILE: b"GGUF tampered"}, etags={REPO_FILE: SHA}).start()
    try:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
        for _ in range(2):  # and the bad blob is not trusted later from the cache
            with pytest.raises(BackendError) as info:
                resolve_gguf(MODEL_ID, SHA)
            assert "has SHA-256 " + hashlib.sha256(b"GGUF tampered").hexdigest() in str(info.value)
    finally:
        server.stop()


def test_unpinned_file_is_downloaded_and_cached(hub):
    path = resolve_gguf(MODEL_ID)
    seen = len(hub.requests)
    assert resolve_gguf(MODEL_ID) == path and len(hub.requests) == seen


def test_absent_file_on_the_hub_is_one_line(hub):
    with pytest.raises(BackendError) as info:
        resolve_gguf("hf:Qwen/Tiny-GGUF/other.gguf")
    assert info.value.kind == "model_missing" and "\n" not in str(info.value)
    assert "hf:Qwen/Tiny-GGUF/other.gguf" in str(info.value)


def test_offline_and_absent_says_so(hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BackendError) as info:
        resolve_gguf(MODEL_ID, SHA)
    assert "not in the Hugging Face cache" in str(info.value) and "HF_HUB_OFFLINE" in str(info.value)
    assert hub.requests == []
    monkeypatch.delenv("HF_HUB_OFFLINE")
    path = resolve_gguf(MODEL_ID, SHA)  # online once: fetched
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_gguf(MODEL_ID, SHA) == path  # offline and present: fine


def test_unreachable_hub_stops_the_job_with_one_line_no_traceback(tmp_path):
    """`python -m runner` with a real model config, no cache and a Hub that refuses connections."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT="http://127.0.0.1:9")  # port 9: nothing listens
    result = subprocess.run(
        [sys.executable, "-m", "runner", "model=qwen25_coder_05b", "tracking=off", "gold.enabled=false",
         f"hydra.run.dir={tmp_path / 'out'}", f"cache_dir={tmp_path / 'cache'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode != 0
    output = result.stdout + result.stderr  # Hydra's log goes to stdout
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if "cannot be reached" in line]
    assert len(errors) == 1, output
    assert "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf is not in the Hugging Face cache" in errors[0]
    assert "http://127.0.0.1:9 cannot be reached" in errors[0]


def test_only_a_refused_port_or_an_unknown_host_is_final(hub, monkeypatch):
    """Those two are said at once; behind a proxy nothing is dialled, so huggingface_hub decides (and retries)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert endpoint_refuses("http://127.0.0.1:9")  # nothing listens on port 9
    assert endpoint_refuses("http://no-such-host.invalid")  # .invalid never resolves (RFC 2606)
    assert not endpoint_refuses(hub.url)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert not endpoint_refuses("http://127.0.0.1:9")


@pytest.mark.slow
def test_a_real_gguf_from_the_hub_loads_generates_and_is_fingerprinted_by_its_pin(tmp_path, monkeypatch):
    """SmolLM2's GGUF served as a Hub file: fetched, loaded by llama.cpp, and its digest is the pinned one."""
    import asyncio

    from runner.config import BackendConfig, ModelConfig
    from runner.generation.backends import GenerationOptions, make_backend

    content = resolve_gguf("smollm2-135m").read_bytes()
    pin = hashlib.sha256(content).hexdigest()
    server = FakeHub({"HuggingFaceTB/SmolLM2-GGUF/smollm2.gguf": content}).start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    model = ModelConfig(name="s", id="hf:HuggingFaceTB/SmolLM2-GGUF/smollm2.gguf", sha256=pin, num_ctx=512)
    backend = make_backend(BackendConfig(name="llamacpp", n_threads=1), model)

    async def run():
        try:
            info = await backend.describe()
            gen = await backend.generate([{"role": "user", "content": "Say hi."}], GenerationOptions(num_predict=4))
            return info, gen
        finally:
            await backend.aclose()

    try:
        info, gen = asyncio.run(run())
    finally:
        server.stop()
    assert info["model_digest"] == f"sha256:{pin}" and info["model"].startswith(str(tmp_path / "hf"))
    assert gen.completion_tokens > 0
