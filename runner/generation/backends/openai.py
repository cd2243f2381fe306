"""OpenAI-compatible backend: POST {base_url}/chat/completions (vLLM, llama.cpp server, LM Studio, ...)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from typing import Any

import httpx

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends.base import (
    BackendError,
    Generation,
    GenerationOptions,
    chat_completion_body,
    chat_completion_generation,
)
from runner.generation.backends.http_errors import error_detail, json_body, status_error, transport_error
from runner.generation.backends.retry import with_retries, within

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
UNREACHABLE_HINT = "is the OpenAI-compatible server running? start it or set backend.base_url"
_MODEL_NOT_FOUND = re.compile(r"model.*(not found|does not exist)", re.IGNORECASE)
DIGEST_FIELDS = ("digest", "sha256", "hash", "fingerprint")
VOLATILE_FIELDS = ("permission",)  # vLLM makes up fresh ids and times in it on every call
CLOCK_SLACK_S = 300


def models_entry_digest(entry: dict[str, Any], now: float | None = None) -> str:
    """The model's fingerprint from its /models entry: a digest the server offers, else a hash of the entry.

    `created` counts unless it is the server's current time (vLLM and llama.cpp's server report the time
    of the request there, Ollama the time the weights were pulled).
    """
    for name in DIGEST_FIELDS:
        if entry.get(name):
            return str(entry[name])
    stable = {k: v for k, v in entry.items() if k not in VOLATILE_FIELDS}
    created = stable.get("created")
    if isinstance(created, int | float) and abs(created - (now if now is not None else time.time())) < CLOCK_SLACK_S:
        del stable["created"]
    canonical = json.dumps(stable, sort_keys=True, default=str)
    return "models-entry-sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


class OpenAIBackend:
    """Talks to any server that implements /chat/completions and /models; non-streaming."""

    def __init__(self, backend: BackendConfig, model: ModelConfig) -> None:
        self.base_url = (backend.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.model_id = model.id
        self.max_retries = backend.max_retries
        self.backoff_s = backend.retry_backoff_s
        self.try_s, self.total_s = backend.request_timeout_s, backend.retry_total_s
        self.in_flight = max(1, backend.max_concurrency)  # requests sent at once (the experiment's limit)
        self._server_header = ""
        headers = {}
        key = os.environ.get(backend.api_key_env, "") if backend.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.AsyncClient(
            base_url=self.base_url, timeout=httpx.Timeout(backend.timeout_s), headers=headers
        )

    def request_body(self, messages: list[dict[str, str]], options: GenerationOptions) -> dict[str, Any]:
        """The /chat/completions body. num_ctx, think and keep_alive have no OpenAI equivalent."""
        return {"model": self.model_id, **chat_completion_body(messages, options), "stream": False}

    async def generate(self, messages: list[dict[str, str]], options: GenerationOptions) -> Generation:
        """One chat completion; transient failures are retried up to backend.max_retries."""
        body = self.request_body(messages, options)
        return await with_retries(
            lambda: self._complete_once(body), max_retries=self.max_retries, backoff_s=self.backoff_s,
            try_s=self.try_s, total_s=self.total_s, what=f"POST {self.base_url}/chat/completions",
        )  # fmt: skip

    async def _complete_once(self, body: dict[str, Any]) -> Generation:
        start = time.perf_counter()
        data = await self._request("POST", "/chat/completions", json=body)
        generation = chat_completion_generation(data, time.perf_counter() - start, self.base_url)
        return dataclasses.replace(generation, server=self.base_url)

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            resp = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise transport_error(exc, base_url=self.base_url, hint=UNREACHABLE_HINT) from exc
        self._server_header = resp.headers.get("server", "")
        if resp.status_code != 200:
            detail = error_detail(resp.content)
            if resp.status_code == 404 and _MODEL_NOT_FOUND.search(detail):
                raise self._model_missing(detail)
            raise status_error(resp.status_code, detail, what=f"{method} {self.base_url}{path}")
        data = json_body(resp, what=f"{method} {self.base_url}{path}")
        if not isinstance(data, dict):
            raise BackendError("error_body", f"{method} {self.base_url}{path} returned {str(data)[:200]}")
        if data.get("error"):
            raise BackendError("error_body", f"{method} {self.base_url}{path} reported: {error_detail(resp.text)}")
        return data

    def _model_missing(self, detail: str) -> BackendError:
        return BackendError(
            "model_missing",
            f"model {self.model_id!r} is not served at {self.base_url}: {detail}; fix model.id",
        )

    async def describe(self) -> dict[str, str]:
        """Checks that the server lists model.id under /models; model_missing names the ids it has.

        The identity holds the base URL and a fingerprint of the model's /models entry, so two servers that
        serve the same model id, or new weights behind an old name, never share cached generations; and the
        requests in flight (`in_flight`), since a server that batches them can answer differently.
        """
        what = f"GET {self.base_url}/models"
        data = await within(lambda: self._request("GET", "/models"), self.try_s, what)
        entries = {str(entry.get("id")): entry for entry in data.get("data") or [] if isinstance(entry, dict)}
        if self.model_id not in entries:
            available = ", ".join(entries) if entries else "none"
            raise self._model_missing(f"the server lists {available}")
        return {
            "backend": "openai",
            "server_version": self._server_header or "unknown",
            "base_url": self.base_url,
            "model": self.model_id,
            "model_digest": models_entry_digest(entries[self.model_id]),
            # vLLM, llama.cpp's server, LM Studio batch the requests in flight: the greedy text depends on it
            "in_flight": str(self.in_flight),
        }

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.aclose()
