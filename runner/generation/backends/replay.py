"""Replay backend: answers from a recorded attempts.jsonl, so old generations can be re-scored.

A request is matched by `replay_key(messages, seed)`. Records whose outcome is `backend_error` hold no
answer and are ignored; a request with no recorded answer raises BackendError("replay_missing").
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends.base import BackendError, Generation, GenerationOptions
from runner.outcome import Outcome
from runner.records import AttemptRecord, read_attempts

NOT_ANSWERS = frozenset({Outcome.BACKEND_ERROR})


def replay_key(messages: list[dict[str, str]], seed: int | None) -> str:
    """sha256 of the canonical JSON of the request's messages and seed."""
    canonical = json.dumps({"messages": messages, "seed": seed}, sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def record_seed(record: AttemptRecord) -> int | None:
    """The seed the recorded request was sent with (`options.seed`, else the record's seed)."""
    if "seed" in record.options:
        return record.options["seed"]
    return record.seed


class ReplayBackend:
    """Serves the recorded responses of one attempts.jsonl file."""

    def __init__(self, backend: BackendConfig, model: ModelConfig) -> None:
        if not backend.replay_file:
            raise BackendError("config", "the replay backend needs backend.replay_file=PATH/attempts.jsonl")
        self.path = Path(backend.replay_file).expanduser()
        if not self.path.is_file():
            raise BackendError("config", f"backend.replay_file {self.path} does not exist")
        self.model_id = model.id
        self.answers: dict[str, AttemptRecord] = {}
        self.conflicts = 0  # same request recorded twice with different responses; the first one wins
        for record in read_attempts(self.path):
            if record.outcome in NOT_ANSWERS:
                continue
            key = replay_key(record.messages, record_seed(record))
            first = self.answers.setdefault(key, record)
            if first is not record and first.response != record.response:
                self.conflicts += 1
        self._file_digest = "sha256:" + hashlib.sha256(self.path.read_bytes()).hexdigest()

    async def generate(self, messages: list[dict[str, str]], options: GenerationOptions) -> Generation:
        """The recorded answer to (messages, options.seed); replay_missing if there is none."""
        start = time.perf_counter()
        record = self.answers.get(replay_key(messages, options.seed))
        if record is None:
            raise BackendError(
                "replay_missing",
                f"{self.path} has no recorded answer for this request (seed={options.seed}, "
                f"{len(messages)} messages); replay only reproduces the exact prompts and seeds of that run",
            )
        raw: dict[str, Any] = {
            "replayed_from": str(self.path),
            "task_id": record.task_id,
            "sample": record.sample,
            "attempt": record.attempt,
            "model": record.model,
            "response": record.response,
            "generation_s": record.generation_s,
        }
        return Generation(
            text=record.response,
            finish_reason=record.finish_reason or "unknown",
            prompt_tokens=record.prompt_tokens,
            completion_tokens=record.completion_tokens,
            duration_s=time.perf_counter() - start,
            raw=raw,
        )

    async def describe(self) -> dict[str, str]:
        """The replay file stands in for the model: its sha256 is the digest. No answers is an error."""
        if not self.answers:
            raise BackendError("config", f"backend.replay_file {self.path} holds no recorded answers")
        models = sorted({record.model for record in self.answers.values()})
        return {
            "backend": "replay",
            "server_version": "replay",
            "model": ",".join(models) or self.model_id,
            "model_digest": self._file_digest,
        }

    async def aclose(self) -> None:
        """Nothing to release."""
