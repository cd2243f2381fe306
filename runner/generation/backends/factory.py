"""Build the backend named by the config."""

from __future__ import annotations

from collections.abc import Callable

from runner.config import BackendConfig, BackendName, ModelConfig
from runner.generation.backends.base import Backend, BackendError
from runner.generation.backends.server_pool import spread_backend


def _ollama(backend: BackendConfig, model: ModelConfig) -> Backend:
    from runner.generation.backends.ollama import OllamaBackend

    return spread_backend(OllamaBackend, backend, model)


def _openai(backend: BackendConfig, model: ModelConfig) -> Backend:
    from runner.generation.backends.openai import OpenAIBackend

    return spread_backend(OpenAIBackend, backend, model)


def _llamacpp(backend: BackendConfig, model: ModelConfig) -> Backend:
    from runner.generation.backends.llamacpp import LlamaCppBackend

    return LlamaCppBackend(backend, model)


def _replay(backend: BackendConfig, model: ModelConfig) -> Backend:
    from runner.generation.backends.replay import ReplayBackend

    return ReplayBackend(backend, model)


# Imported lazily so that e.g. the replay backend does not load llama.cpp's native library.
BACKENDS: dict[BackendName, Callable[[BackendConfig, ModelConfig], Backend]] = {
    BackendName.ollama: _ollama,
    BackendName.openai: _openai,
    BackendName.llamacpp: _llamacpp,
    BackendName.replay: _replay,
}
"""One builder per `BackendName` (the schema's choices; a test holds the two equal)."""


def make_backend(backend: BackendConfig, model: ModelConfig) -> Backend:
    """The backend for `backend.name`; BackendError(kind="config") lists the valid names otherwise."""
    build = BACKENDS.get(backend.name)
    if build is None:
        raise BackendError(
            "config", f"unknown backend.name {backend.name!r}; valid backends: {', '.join(sorted(BACKENDS))}"
        )
    return build(backend, model)
