"""Ollama backend: streaming POST /api/chat (NDJSON), preflight via /api/version, /api/show, /api/tags.

Up to `backend.max_concurrency` requests are in flight at once (the experiment loop keeps them going);
Ollama answers up to its OLLAMA_NUM_PARALLEL of them together in one batch and queues the rest (up to
OLLAMA_MAX_QUEUE, then 503). A batched greedy answer can differ from an unbatched one, so the number in
flight is part of the model's identity (`in_flight`, in the generation key and on the run), as the embedded
backend's slots are; `backend.max_concurrency=1` gives unbatched answers whatever the server allows.
A server that kept a request waiting in its queue (it answers fewer at once) is named once in a warning.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

import httpx

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends.base import BackendError, Generation, GenerationOptions, sampling_fields
from runner.generation.backends.http_errors import error_detail, json_body, status_error, transport_error
from runner.generation.backends.retry import with_retries, within

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
UNREACHABLE_HINT = "is Ollama running? start it with `ollama serve` or set backend.base_url"
_MODEL_NOT_FOUND = re.compile(r"model .* not found", re.IGNORECASE)
QUEUE_WARN_S = 1.0  # a request held longer than this (and a quarter of its time) in the server's queue is named
log = logging.getLogger(__name__)


def queued_s(final: dict[str, Any]) -> float:
    """Seconds Ollama held a request before working on it: the final chunk's total_duration less its load,
    prompt and generation durations (nanoseconds); 0 when the server reports no total."""
    total = final.get("total_duration")
    if not isinstance(total, int | float):
        return 0.0
    busy = sum(v for k in ("load_duration", "prompt_eval_duration", "eval_duration")
               if isinstance(v := final.get(k), int | float))  # fmt: skip
    return max(0.0, (total - busy) / 1e9)


def canonical_model_name(name: str) -> str:
    """Ollama's own normalisation: a name without a tag means `:latest`."""
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last else f"{name}:latest"


class OllamaBackend:
    """Talks to an Ollama server over HTTP; one instance per (server, model)."""

    def __init__(self, backend: BackendConfig, model: ModelConfig) -> None:
        self.base_url = (backend.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.model_id = model.id
        self.think = model.think
        self.keep_alive = backend.keep_alive or None
        self.in_flight = max(1, backend.max_concurrency)  # requests sent at once (the experiment's limit)
        self._queue_named = False
        self.max_retries = backend.max_retries
        self.backoff_s = backend.retry_backoff_s
        self.try_s, self.total_s = backend.request_timeout_s, backend.retry_total_s
        self._client = httpx.AsyncClient(
            base_url=self.base_url, timeout=httpx.Timeout(backend.timeout_s), trust_env=False
        )

    def request_body(self, messages: list[dict[str, str]], options: GenerationOptions) -> dict[str, Any]:
        """The /api/chat body: sampling in `options`, `think` and `keep_alive` at the top level.

        `options.think` / `options.keep_alive` win; when None, model.think / backend.keep_alive apply.
        """
        opts = {**sampling_fields(options), "num_ctx": options.num_ctx, "num_predict": options.num_predict}
        body: dict[str, Any] = {"model": self.model_id, "messages": messages, "stream": True, "options": opts}
        think = options.think if options.think is not None else self.think
        if think is not None:
            body["think"] = think
        keep_alive = options.keep_alive if options.keep_alive is not None else self.keep_alive
        if keep_alive is not None:
            body["keep_alive"] = keep_alive
        return body

    async def generate(self, messages: list[dict[str, str]], options: GenerationOptions) -> Generation:
        """Stream one chat answer; transient failures are retried up to backend.max_retries."""
        body = self.request_body(messages, options)
        return await with_retries(
            lambda: self._chat_once(body), max_retries=self.max_retries, backoff_s=self.backoff_s,
            try_s=self.try_s, total_s=self.total_s, what=f"Ollama POST {self.base_url}/api/chat",
        )  # fmt: skip

    async def _chat_once(self, body: dict[str, Any]) -> Generation:
        start = time.perf_counter()
        try:
            async with self._client.stream("POST", "/api/chat", json=body) as resp:
                if resp.status_code != 200:
                    raise self._status_error(resp.status_code, error_detail(await resp.aread()), "POST /api/chat")
                final, content, thinking = await self._read_stream(resp)
        except httpx.HTTPError as exc:
            err = transport_error(exc, base_url=self.base_url, hint=UNREACHABLE_HINT)
            if err.kind == "timeout" and self.in_flight > 1:  # Ollama sends nothing while a request is queued
                err = BackendError("timeout", f"{err}; {self._queue_hint()}", transient=True)
            raise err from exc
        self._name_a_queue(final)
        text = "".join(content)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if thinking:
            message["thinking"] = "".join(thinking)
        raw = {**final, "message": message}
        return Generation(
            text=text,
            finish_reason=str(final.get("done_reason") or "unknown"),
            prompt_tokens=int(final.get("prompt_eval_count") or 0),
            completion_tokens=int(final.get("eval_count") or 0),
            duration_s=time.perf_counter() - start,
            raw=raw,
            server=self.base_url,
        )

    def _name_a_queue(self, final: dict[str, Any]) -> None:
        """Warn once when the server queued a request: it serves fewer than backend.max_concurrency at once."""
        waited = queued_s(final)
        total_s = float(final.get("total_duration") or 0) / 1e9
        if self._queue_named or self.in_flight == 1 or waited <= max(QUEUE_WARN_S, total_s / 4):
            return
        self._queue_named = True
        log.warning("Ollama at %s kept a request %.1fs in its queue: %s", self.base_url, waited, self._queue_hint())

    def _queue_hint(self) -> str:
        return (
            f"a server that answers fewer than backend.max_concurrency={self.in_flight} requests at once (or serves "
            f"other clients) queues the rest; start it with OLLAMA_NUM_PARALLEL={self.in_flight}, or set "
            "backend.max_concurrency to its OLLAMA_NUM_PARALLEL"
        )

    async def _read_stream(self, resp: httpx.Response) -> tuple[dict[str, Any], list[str], list[str]]:
        content: list[str] = []
        thinking: list[str] = []
        lines = 0
        async for line in resp.aiter_lines():
            if not line.strip():
                continue
            lines += 1
            try:
                chunk = json.loads(line)
            except ValueError as exc:
                raise BackendError(
                    "broken_stream", f"Ollama sent a line that is not JSON: {line[:200]!r}", transient=True
                ) from exc
            if not isinstance(chunk, dict):
                raise BackendError("broken_stream", f"Ollama sent {line[:200]!r}", transient=True)
            if "error" in chunk:
                raise BackendError(
                    "error_body",
                    f"Ollama reported an error mid-stream after {lines - 1} chunks: {chunk['error']}",
                )
            message = chunk.get("message") or {}
            content.append(message.get("content") or "")
            if message.get("thinking"):
                thinking.append(message["thinking"])
            if chunk.get("done"):
                return chunk, content, thinking
        raise BackendError(
            "broken_stream",
            f"Ollama's stream ended after {lines} chunks without `done: true` (server restarted or crashed?)",
            transient=True,
        )

    def _status_error(self, status: int, detail: str, what: str) -> BackendError:
        if status == 404 and _MODEL_NOT_FOUND.search(detail):
            return self._model_missing(detail)
        if status == 400 and "does not support thinking" in detail:
            return BackendError("bad_request", f"Ollama {what}: {detail}; set model.think=false (or null) for it")
        return status_error(status, detail, what=f"Ollama {what}")

    def _model_missing(self, detail: str) -> BackendError:
        return BackendError(
            "model_missing",
            f"model {self.model_id!r} is not on the Ollama server at {self.base_url} ({detail}); "
            f"run `ollama pull {self.model_id}` or fix model.id",
        )

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            resp = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise transport_error(exc, base_url=self.base_url, hint=UNREACHABLE_HINT) from exc
        if resp.status_code != 200:
            raise self._status_error(resp.status_code, error_detail(resp.content), f"{method} {path}")
        data = json_body(resp, what=f"Ollama {method} {path}")
        if isinstance(data, dict) and "error" in data:
            raise BackendError("error_body", f"Ollama {method} {path} reported: {data['error']}")
        return data if isinstance(data, dict) else {}

    async def describe(self) -> dict[str, str]:
        """Server version, the model's digest and the requests in flight; fails (model_missing, unreachable,
        timeout) if unusable."""
        return await within(self._describe, self.try_s, f"Ollama at {self.base_url}")

    async def _describe(self) -> dict[str, str]:
        version = await self._request("GET", "/api/version")
        show = await self._request("POST", "/api/show", json={"model": self.model_id})
        tags = await self._request("GET", "/api/tags")
        wanted = canonical_model_name(self.model_id)
        digest = ""
        for entry in tags.get("models") or []:
            names = {canonical_model_name(str(entry.get(key, ""))) for key in ("name", "model")}
            if wanted in names:
                digest = str(entry.get("digest") or "")
                break
        if not digest:
            digest = str((show.get("details") or {}).get("digest") or show.get("digest") or "")
        digest = digest or "unknown"
        if re.fullmatch(r"[0-9a-f]{64}", digest):
            digest = f"sha256:{digest}"
        return {
            "backend": "ollama",
            "server_version": str(version.get("version", "unknown")),
            "model": self.model_id,
            "model_digest": digest,
            # the server batches the requests in flight together: at temperature 0 the text depends on it
            "in_flight": str(self.in_flight),
        }

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.aclose()
