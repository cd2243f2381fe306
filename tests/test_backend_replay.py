"""The replay backend answers from a recorded attempts.jsonl."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BackendError, GenerationOptions, make_backend
from runner.generation.backends.replay import replay_key
from runner.records import AttemptRecord

FIRST = [{"role": "user", "content": "write add"}]
REPAIR = [*FIRST, {"role": "assistant", "content": "def add(a, b): return a - b"}, {"role": "user", "content": "fix"}]


def record(messages, seed, response, outcome="passed", attempt=0) -> AttemptRecord:
    return AttemptRecord(
        task_id="add", sample=0, attempt=attempt, seed=seed, model="gemma3_4b", messages=messages,
        options={"temperature": 0.0, "seed": seed}, response=response, code=None, outcome=outcome, final=True,
        finish_reason="stop", prompt_tokens=12, completion_tokens=7,
    )  # fmt: skip


@pytest.fixture
def attempts(tmp_path):
    path = tmp_path / "attempts.jsonl"
    lines = [
        record(FIRST, 42, "def add(a, b): return a - b", outcome="failed").to_json(),
        record(REPAIR, 42, "def add(a, b): return a + b", attempt=1).to_json(),
        record(FIRST, 43, "", outcome="backend_error").to_json(),
        '{"task_id": "add", "torn',  # a crash mid-write
    ]
    path.write_text("\n".join(lines))
    return path


def replay(path):
    return make_backend(BackendConfig(name="replay", replay_file=str(path)), ModelConfig(name="m", id="gemma3:4b"))


def test_round_trip(attempts):
    backend = replay(attempts)
    first = asyncio.run(backend.generate(FIRST, GenerationOptions(seed=42)))
    assert first.text == "def add(a, b): return a - b"
    assert (first.finish_reason, first.prompt_tokens, first.completion_tokens) == ("stop", 12, 7)
    assert first.raw["task_id"] == "add" and first.raw["attempt"] == 0
    # messages built anew (other dict order) still match: the key is canonical JSON
    repair = [{"content": m["content"], "role": m["role"]} for m in REPAIR]
    second = asyncio.run(backend.generate(repair, GenerationOptions(seed=42, temperature=0.7)))
    assert second.text == "def add(a, b): return a + b"


def test_other_seed_is_replay_missing(attempts):
    with pytest.raises(BackendError) as info:
        asyncio.run(replay(attempts).generate(FIRST, GenerationOptions(seed=1)))
    assert info.value.kind == "replay_missing" and not info.value.transient


def test_backend_error_records_are_not_answers(attempts):
    with pytest.raises(BackendError) as info:
        asyncio.run(replay(attempts).generate(FIRST, GenerationOptions(seed=43)))
    assert info.value.kind == "replay_missing"


def test_describe_fingerprints_the_file(attempts):
    info = asyncio.run(replay(attempts).describe())
    assert info["backend"] == "replay"
    assert info["model"] == "gemma3_4b"
    assert info["model_digest"] == "sha256:" + hashlib.sha256(attempts.read_bytes()).hexdigest()


def test_replay_key_is_sha256_of_messages_and_seed():
    expected = hashlib.sha256(json.dumps({"messages": FIRST, "seed": 42}, sort_keys=True).encode()).hexdigest()
    assert replay_key(FIRST, 42) == expected
    assert replay_key(FIRST, 42) != replay_key(FIRST, 43)


def test_missing_or_unset_file_is_a_config_error(tmp_path):
    for path in ("", tmp_path / "nope.jsonl"):
        with pytest.raises(BackendError) as info:
            replay(path)
        assert info.value.kind == "config" and "replay_file" in str(info.value)


def test_file_without_answers_fails_describe(tmp_path):
    path = tmp_path / "attempts.jsonl"
    path.write_text(record(FIRST, 42, "", outcome="backend_error").to_json() + "\n")
    with pytest.raises(BackendError) as info:
        asyncio.run(replay(path).describe())
    assert info.value.kind == "config"
