"""The backend interface: one request in (`messages`, `GenerationOptions`), one `Generation` out.

Every backend (Ollama, OpenAI-compatible, embedded llama.cpp, replay) implements `Backend`. A failure of
the model server is a `BackendError`: the experiment loop records it as `backend_error` (unscored),
never as a model failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

ERROR_KINDS = (
    "unreachable",
    "model_missing",
    "bad_request",
    "not_found",
    "server_error",
    "unavailable",
    "broken_stream",
    "error_body",
    "timeout",
    "replay_missing",
    "config",
)


@dataclass(frozen=True)
class GenerationOptions:
    """Sampling and server options of one request. `None` means "leave it to the server"."""

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    num_ctx: int = 4096
    num_predict: int = 512
    stop: tuple[str, ...] = ()
    think: bool | None = None
    keep_alive: str | None = None


@dataclass(frozen=True)
class Generation:
    """One answer: the assistant's text (reasoning excluded: it stays in `raw`) and its accounting."""

    text: str
    finish_reason: str  # "stop" | "length" | ...
    prompt_tokens: int
    completion_tokens: int
    duration_s: float  # wall time of the request (the successful try)
    raw: dict[str, Any]  # the raw response body (JSON-able)
    server: str = ""  # the base URL of the server that answered ("" for an in-process model)


class BackendError(Exception):
    """The generation backend failed; `str(err)` says what to do about it.

    `kind` is one of `ERROR_KINDS`; `transient` tells whether retrying the same request makes sense
    (connection refused during a restart, 500, 503, a broken stream, a timeout).
    """

    def __init__(self, kind: str, message: str, *, transient: bool = False) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown BackendError kind {kind!r}; expected one of {', '.join(ERROR_KINDS)}")
        super().__init__(message)
        self.kind = kind
        self.transient = transient

    def __repr__(self) -> str:
        return f"BackendError({self.kind!r}, {str(self)!r}, transient={self.transient})"


class Backend(Protocol):
    """What the experiment loop talks to."""

    async def generate(self, messages: list[dict[str, str]], options: GenerationOptions) -> Generation:
        """Answer one chat request; transient failures are retried inside, then raised as BackendError."""
        ...

    async def describe(self) -> dict[str, str]:
        """Preflight and provenance: `backend`, `server_version`, `model`, `model_digest`.

        Raises BackendError when the server or the model is unusable (an unknown model fails here).
        """
        ...

    async def aclose(self) -> None:
        """Release connections, threads and loaded models."""
        ...


def sampling_fields(options: GenerationOptions) -> dict[str, Any]:
    """temperature and top_p, and the seed and stop sequences when set: named alike by every backend's API."""
    fields: dict[str, Any] = {"temperature": options.temperature, "top_p": options.top_p}
    if options.seed is not None:
        fields["seed"] = options.seed
    if options.stop:
        fields["stop"] = list(options.stop)
    return fields


def chat_completion_generation(data: dict[str, Any], duration_s: float, server: str) -> Generation:
    """The answer in an OpenAI-style chat completion; BackendError("error_body") when it holds no choice."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError("error_body", f"{server}'s answer has no choices: {str(data)[:300]}")
    choice = choices[0]
    usage = data.get("usage") or {}
    return Generation(
        text=str((choice.get("message") or {}).get("content") or ""),
        finish_reason=str(choice.get("finish_reason") or "unknown"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        duration_s=duration_s,
        raw=data,
    )


def chat_completion_body(messages: list[dict[str, str]], options: GenerationOptions) -> dict[str, Any]:
    """The OpenAI-style chat-completion fields every OpenAI-compatible endpoint understands."""
    return {"messages": messages, "max_tokens": options.num_predict, **sampling_fields(options)}
