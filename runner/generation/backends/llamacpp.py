"""Embedded llama.cpp backend (xllamacpp): the model runs in-process, no server needed.

The model is loaded once per backend instance, lazily and in a worker thread, with
`backend.max_concurrency` slots: llama.cpp batches the requests in flight into one forward pass per token
(continuous batching), each in a worker thread of its own, and each slot has the model's whole `num_ctx`.
Batched greedy answers can differ slightly from unbatched ones and from one fresh run to the next (the
arithmetic of a batch depends on which requests share it), so the slot count is part of the model's
identity, as the thread count is; `backend.max_concurrency=1` gives answers that repeat run to run.
Prompt caching is off so that a request's result does not depend on the requests before it.

`backend.speculative=ngram` turns on llama.cpp's draftless speculative decoding (`ngram-simple`): where the
last NGRAM_SIZE tokens occurred before in the prompt or the answer, the tokens that followed them there are
drafted and the model verifies the whole draft in one batch, keeping the tokens it would have chosen itself.
Code answers restate the prompt's signature and docstring, which such drafts predict. Like the slot count it
changes the batches, so it is part of the model's identity when on.

Answers are streamed token by token into the worker thread, so that a cancelled request (Ctrl-C, SIGTERM,
a job stopping) stops at the next token instead of running to its end; its partial answer is discarded.
`aclose()` stops every request still in flight the same way first. The worker threads are the backend's own,
one per slot: in asyncio's default executor (cores + 4 threads) 8 slots would get 6 threads, and judging,
which runs there too, would wait behind them.

backend.n_threads=0 means every core that other programs are not busy with when the model loads
(cpu.free_cores): the test sandboxes that run beside generation are niced and yield to it, but a core
busy with another program's work would make llama.cpp's threads, which wait on each other each step,
slow down many times over.
"""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import xllamacpp

from runner import interrupt
from runner.config import BackendConfig, ModelConfig, Speculative
from runner.generation.backends.base import (
    BackendError,
    Generation,
    GenerationOptions,
    chat_completion_body,
    chat_completion_generation,
)
from runner.generation.backends.cpu import free_cores
from runner.generation.backends.gguf import gguf_digest, resolve_gguf
from runner.generation.backends.hf_hub import PREFIX as HUB_PREFIX
from runner.generation.backends.hf_hub import pinned_hex
from runner.generation.backends.http_errors import status_error
from runner.generation.backends.retry import with_retries

NGRAM_SIZE = 12  # tokens that must match earlier ones before a draft is made (llama.cpp's default)
NGRAM_DRAFT = 48  # tokens drafted at most (llama.cpp's default)


class LlamaCppBackend:
    """One GGUF model loaded in this process via xllamacpp."""

    def __init__(self, backend: BackendConfig, model: ModelConfig) -> None:
        self.model_id = model.id
        self.sha256 = model.sha256
        self.num_ctx = model.num_ctx
        self.think = model.think
        self.n_threads = backend.n_threads  # 0 = free_cores() at each load
        self.slots = max(1, backend.max_concurrency)
        self.speculative = Speculative(backend.speculative)
        self.threads_in_use = 0  # what the loaded model got (0 = not loaded)
        self.max_retries = backend.max_retries
        self.backoff_s = backend.retry_backoff_s
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="llamacpp")
        self._in_flight: set[threading.Event] = set()  # one cancel flag per request being generated
        self._stopping = False  # set by the signal handler itself: every generation stops at its next token
        interrupt.on_signal(self._stop_now)
        self._server: Any = None
        self._server_ctx = 0
        self._path: Path | None = None
        self._digest: str | None = None

    def request_body(self, messages: list[dict[str, str]], options: GenerationOptions) -> dict[str, Any]:
        """The OpenAI-style request handed to llama.cpp's chat handler (num_ctx is a load parameter)."""
        body = {**chat_completion_body(messages, options), "cache_prompt": False}
        think = options.think if options.think is not None else self.think
        if think is not None:
            body["chat_template_kwargs"] = {"enable_thinking": think}
        return body

    async def generate(self, messages: list[dict[str, str]], options: GenerationOptions) -> Generation:
        """Generate in a worker thread; the model is (re)loaded if options.num_ctx differs from the loaded one.

        Cancelling the awaiting task stops the generation at its next token."""
        body = {**self.request_body(messages, options), "stream": True}
        return await with_retries(
            lambda: self._generate_cancellable(body, options.num_ctx),
            max_retries=self.max_retries,
            backoff_s=self.backoff_s,
        )

    async def _generate_cancellable(self, body: dict[str, Any], n_ctx: int) -> Generation:
        cancelled = threading.Event()
        self._in_flight.add(cancelled)
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._threads, self._generate_sync, body, n_ctx, cancelled
            )
        finally:
            cancelled.set()  # a thread still generating (the task was cancelled) stops at its next token
            self._in_flight.discard(cancelled)

    async def describe(self) -> dict[str, str]:
        """Resolves and loads the model (the preflight) and fingerprints the GGUF file."""
        return await asyncio.to_thread(self._describe_sync)

    def _stop_now(self) -> None:
        """Called in the SIGINT/SIGTERM handler (runner.interrupt): a plain flag, no lock."""
        self._stopping = True

    async def aclose(self) -> None:
        """Stop every request in flight at its next token, then free the loaded model."""
        for cancelled in list(self._in_flight):
            cancelled.set()
        self._threads.shutdown(wait=False)
        await asyncio.to_thread(self._unload)

    def _resolve(self) -> Path:
        if self._path is None:
            self._path = resolve_gguf(self.model_id, self.sha256)
        return self._path

    def _load(self, n_ctx: int) -> Any:
        """The loaded server for `n_ctx`; call with the lock held."""
        if self._server is not None and self._server_ctx == n_ctx:
            return self._server
        path = self._resolve()
        self._server = None
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx * self.slots  # shared out among the slots
        params.n_parallel = self.slots
        self.threads_in_use = self.threads()
        params.cpuparams.n_threads = self.threads_in_use
        params.cpuparams_batch.n_threads = self.threads_in_use
        params.verbosity = -1  # silences llama.cpp's load and request logging
        if self.speculative == Speculative.ngram:
            params.speculative.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
            params.speculative.ngram_simple.size_n = NGRAM_SIZE
            params.speculative.ngram_simple.size_m = NGRAM_DRAFT
        try:
            self._server = xllamacpp.Server(params)
        except Exception as exc:  # xllamacpp raises RuntimeError with no detail
            raise BackendError(
                "model_missing",
                f"llama.cpp could not load {path} (n_ctx={n_ctx}): {exc}; is it a valid GGUF file?",
            ) from exc
        self._server_ctx = n_ctx
        return self._server

    def threads(self) -> int:
        """The thread count for the next load: backend.n_threads, or the free cores if it is 0."""
        return self.n_threads if self.n_threads > 0 else free_cores()

    def _unload(self) -> None:
        with self._lock:
            self._server = None
            self._server_ctx = 0

    def _describe_sync(self) -> dict[str, str]:
        with self._lock:
            path = self._resolve()
            self._load(self._server_ctx or self.num_ctx)
            if self._digest is None:  # a pinned hf: file was checked against its pin when it was fetched
                pinned = pinned_hex(self.sha256) if self.model_id.startswith(HUB_PREFIX) else ""
                self._digest = f"sha256:{pinned}" if pinned else gguf_digest(path)
        identity = {
            "backend": "llamacpp",
            "server_version": f"xllamacpp {xllamacpp.__version__}",
            "model": str(path),
            "model_digest": self._digest,
            # at temperature 0 the text still depends on the thread count (1 and 2 threads differ) and on batching
            "threads": str(self.threads_in_use),
            "slots": str(self.slots),
        }
        if self.speculative != Speculative.none:  # absent when off, so the generation keys of earlier jobs hold
            identity["speculative"] = f"ngram-simple n={NGRAM_SIZE} m={NGRAM_DRAFT}"
        return identity

    def _generate_sync(self, body: dict[str, Any], n_ctx: int, cancelled: threading.Event) -> Generation:
        with self._lock:  # loading only: requests in flight together share the server's slots
            server = self._load(n_ctx)
        chunks: list[dict] = []

        def on_chunk(chunk: Any) -> bool:  # True stops the generation
            chunks.append(chunk)
            return self._stopping or cancelled.is_set()

        start = time.perf_counter()
        try:
            server.handle_chat_completions(body, on_chunk)
        except ValueError as exc:
            raise BackendError("bad_request", f"llama.cpp rejected the request: {exc}") from exc
        except RuntimeError as exc:
            raise BackendError("server_error", f"llama.cpp failed: {exc}", transient=True) from exc
        duration = time.perf_counter() - start
        return streamed_generation(chunks, duration)


def streamed_generation(chunks: list[Any], duration_s: float) -> Generation:
    """The answer assembled from llama.cpp's streamed chat-completion chunks (text, finish reason, token
    counts from the last chunk's timings); BackendError for an error chunk or an unfinished stream."""
    for chunk in chunks:
        if not isinstance(chunk, dict):
            raise BackendError("error_body", f"llama.cpp streamed {type(chunk).__name__}, not a dict")
        if "error" in chunk:
            err = chunk["error"]
            code = err.get("code", 500) if isinstance(err, dict) else 500
            message = err.get("message", str(err)) if isinstance(err, dict) else str(err)
            raise status_error(int(code), message, what="llama.cpp chat completion")
    choices = [c["choices"][0] for c in chunks if c.get("choices")]
    last = chunks[-1] if chunks else {}
    finish = next((c.get("finish_reason") for c in reversed(choices) if c.get("finish_reason")), None)
    if finish is None:
        raise BackendError("broken_stream", "llama.cpp's answer ended before its last chunk", transient=True)
    text = "".join((c.get("delta") or {}).get("content") or "" for c in choices)
    timings = last.get("timings") or {}
    message = {"role": "assistant", "content": text}
    data = {**last, "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": int(timings.get("prompt_n") or 0),
                      "completion_tokens": int(timings.get("predicted_n") or 0)}}  # fmt: skip
    return chat_completion_generation(data, duration_s, "llama.cpp")
