"""Several servers of one model behind one backend: `backend.base_url` given as a list.

Each request goes to the live server with the fewest requests in flight (ties: the one that got fewest so
far), never more than `backend.max_concurrency` at once per server. A server that fails a request in a way
that is its own (refused or reset connection, timeout, 5xx, once its own retries are used up) is taken
out, and the request is tried on the next server; only a request that every server failed is raised
(the experiment records it as `backend_error`, unscored). A server taken out is asked again after
`backend.probe_after_s` with the start-up check, and comes back when it still serves the same model.

The servers must agree on the model at start-up (`describe`: backend, server version, model, digest), so
one generation cache key stands for whichever server answers; `Generation.server` names the one that did.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends.base import Backend, BackendError, Generation, GenerationOptions

log = logging.getLogger(__name__)

SERVER_FAULTS = ("unreachable", "timeout", "server_error", "unavailable", "broken_stream", "model_missing", "not_found")
"""Failures of one server, not of the request: another server may answer it (a bad request fails on any)."""


def server_urls(backend: BackendConfig) -> list[str]:
    """`backend.base_url` as a list of URLs ([] when unset: the backend's default server)."""
    urls = backend.base_url if isinstance(backend.base_url, list) else [backend.base_url]
    return [str(url) for url in urls if str(url).strip()]


def spread_backend(build: Callable[[BackendConfig, ModelConfig], Backend], backend: BackendConfig,
                   model: ModelConfig) -> Backend:  # fmt: skip
    """`build`'s backend for one server, or a `ServerPool` of one per URL when base_url lists several."""
    urls = server_urls(backend)
    if len(urls) <= 1:
        return build(dataclasses.replace(backend, base_url=urls[0] if urls else ""), model)
    servers = [build(dataclasses.replace(backend, base_url=url), model) for url in urls]
    return ServerPool(urls, servers, backend.max_concurrency, backend.probe_after_s)


@dataclasses.dataclass(eq=False)
class _Server:
    url: str
    backend: Backend
    alive: bool = True
    outstanding: int = 0
    sent: int = 0
    back_at: float = 0.0  # when a server taken out is asked again
    probing: bool = False


class ServerPool:
    """One backend over several servers of the same model (see the module docstring)."""

    def __init__(self, urls: Sequence[str], backends: Sequence[Backend], max_concurrency: int,
                 probe_after_s: float) -> None:  # fmt: skip
        self.servers = [_Server(url.rstrip("/"), b) for url, b in zip(urls, backends, strict=True)]
        self.max_concurrency = max(1, max_concurrency)
        self.probe_after_s = probe_after_s
        self._identity: dict[str, str] | None = None
        self._changed = asyncio.Condition()
        self._probes: set[asyncio.Task] = set()

    async def describe(self) -> dict[str, str]:
        """Every server's identity; they must agree (else BackendError "config" naming the odd one out).

        A server that cannot be reached now is taken out and probed later; when none can, the first one's
        error is raised, as is a server's non-transient error (e.g. model_missing). The identity is the
        common one, with `base_url` (OpenAI) listing every server.
        """
        answers = await asyncio.gather(*(s.backend.describe() for s in self.servers), return_exceptions=True)
        for answer in answers:  # a server without the model is a mistake in the config, not an outage
            if isinstance(answer, BaseException) and not (isinstance(answer, BackendError) and answer.transient):
                raise answer
        up = [(s, a) for s, a in zip(self.servers, answers, strict=True) if isinstance(a, dict)]
        if not up:
            raise answers[0]
        first, expected = up[0]
        for server, answer in up[1:]:
            differs = _difference(answer, expected)
            if differs:
                raise BackendError(
                    "config",
                    f"the servers of backend.base_url serve different models: {server.url} reports {differs}, "
                    f"{first.url} reports {_difference(expected, answer)}; serve one model everywhere or drop "
                    f"{server.url} from backend.base_url",
                )
        for server, answer in zip(self.servers, answers, strict=True):
            if isinstance(answer, BackendError):
                log.warning("server %s taken out at start-up (%s); asked again in %gs", server.url, answer,
                            self.probe_after_s)  # fmt: skip
                self._take_out(server)
        self._identity = expected
        identity = dict(expected)
        if "base_url" in identity:
            identity["base_url"] = ", ".join(sorted(s.url for s in self.servers))
        return identity

    async def generate(self, messages: list[dict[str, str]], options: GenerationOptions) -> Generation:
        """Answer on the least busy live server; a server's own failure sends the request to the next one."""
        tried: set[_Server] = set()
        failures: list[tuple[str, BackendError]] = []
        while True:
            server = await self._acquire(tried)
            if server is None:
                raise _all_failed(failures)
            try:
                generation = await server.backend.generate(messages, options)
            except BackendError as err:
                if err.kind not in SERVER_FAULTS:
                    raise
                tried.add(server)
                failures.append((server.url, err))
                if server.alive:
                    log.warning("server %s taken out (%s); its requests go to the other servers", server.url, err)
                    self._take_out(server)
                continue
            finally:
                await self._release(server)
            return dataclasses.replace(generation, server=server.url)

    async def _acquire(self, tried: set[_Server]) -> _Server | None:
        """A server with a free slot that this request has not tried: a live one, else (none live) any.

        None when every server has been tried. Waits while the candidates are all busy.
        """
        async with self._changed:
            while True:
                self._start_due_probes()
                untried = [s for s in self.servers if s not in tried]
                candidates = [s for s in untried if s.alive] or untried
                if not candidates:
                    return None
                free = [s for s in candidates if s.outstanding < self.max_concurrency]
                if free:
                    server = min(free, key=lambda s: (s.outstanding, s.sent))
                    server.outstanding += 1
                    server.sent += 1
                    return server
                await self._changed.wait()

    async def _release(self, server: _Server) -> None:
        async with self._changed:
            server.outstanding -= 1
            self._changed.notify_all()

    def _take_out(self, server: _Server) -> None:
        server.alive = False
        server.back_at = asyncio.get_running_loop().time() + self.probe_after_s

    def _start_due_probes(self) -> None:
        now = asyncio.get_running_loop().time()
        for server in self.servers:
            if not server.alive and not server.probing and now >= server.back_at:
                server.probing = True
                task = asyncio.ensure_future(self._probe(server))
                self._probes.add(task)
                task.add_done_callback(self._probes.discard)

    async def _probe(self, server: _Server) -> None:
        """The start-up check on a server taken out: back in when it answers with the same model."""
        try:
            answer = await server.backend.describe()
            differs = _difference(answer, self._identity or answer)
        except BackendError as err:
            answer, differs = None, str(err)
        async with self._changed:
            server.probing = False
            if answer is not None and not differs:
                log.warning("server %s answers again; back in", server.url)
                server.alive = True
            else:
                log.warning("server %s still out (%s); asked again in %gs", server.url, differs, self.probe_after_s)
                self._take_out(server)
            self._changed.notify_all()

    async def aclose(self) -> None:
        """Stop the probes; close every server's connections."""
        for task in list(self._probes):
            task.cancel()
        await asyncio.gather(*self._probes, return_exceptions=True)
        await asyncio.gather(*(s.backend.aclose() for s in self.servers))


def _difference(identity: dict[str, Any], other: dict[str, Any]) -> str:
    """`identity`'s fields that differ from `other`'s (base_url aside), as `key=value` text ("" if none)."""
    keys = sorted((set(identity) | set(other)) - {"base_url"})
    return ", ".join(f"{k}={identity.get(k)!r}" for k in keys if identity.get(k) != other.get(k))


def _all_failed(failures: list[tuple[str, BackendError]]) -> BackendError:
    """The error of a request that every server failed: the last kind, every server's reason."""
    said = "; ".join(f"{url}: {err}" for url, err in failures)
    return BackendError(failures[-1][1].kind, f"every server of backend.base_url failed: {said}", transient=True)
