"""Map HTTP statuses and httpx transport failures to `BackendError` (shared by the HTTP backends)."""

from __future__ import annotations

import json

import httpx

from runner.generation.backends.base import BackendError

MAX_DETAIL_CHARS = 500


def error_detail(body: bytes | str) -> str:
    """The server's own error message: `{"error": "..."}`, `{"error": {"message": ...}}` or the text."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:MAX_DETAIL_CHARS]
    if isinstance(data, dict) and "error" in data:
        err = data["error"]
        if isinstance(err, dict):
            err = err.get("message", err)
        return str(err)[:MAX_DETAIL_CHARS]
    return text.strip()[:MAX_DETAIL_CHARS]


def status_error(status: int, detail: str, *, what: str) -> BackendError:
    """A BackendError for an HTTP error status; `what` names the request (e.g. "POST /api/chat")."""
    said = f"{what} returned HTTP {status}: {detail}"
    if status == 400:
        return BackendError("bad_request", f"{said}; the request was rejected, check the options sent")
    if status in (401, 403):
        return BackendError("bad_request", f"{said}; check the API key (backend.api_key_env)")
    if status == 404:
        return BackendError("not_found", f"{said}; check backend.base_url and model.id")
    if status == 408:
        return BackendError("timeout", f"{said}; the server timed out", transient=True)
    if status in (429, 503):
        return BackendError("unavailable", f"{said}; the server is busy or loading", transient=True)
    if status >= 500:
        return BackendError("server_error", f"{said}; the server failed", transient=True)
    return BackendError("bad_request", said)


def transport_error(exc: httpx.HTTPError, *, base_url: str, hint: str) -> BackendError:
    """A BackendError for a failure below HTTP: refused connection, timeout, cut stream."""
    if isinstance(exc, httpx.ConnectError):
        return BackendError("unreachable", f"cannot connect to {base_url} ({exc}); {hint}", transient=True)
    if isinstance(exc, httpx.TimeoutException):
        kind = type(exc).__name__
        return BackendError(
            "timeout",
            f"{base_url} did not answer in time ({kind}); raise backend.timeout_s or lower num_predict",
            transient=True,
        )
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return BackendError("broken_stream", f"the connection to {base_url} broke mid-response ({exc})", transient=True)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return BackendError("config", f"bad backend.base_url {base_url!r}: {exc}")
    return BackendError("unreachable", f"request to {base_url} failed ({type(exc).__name__}: {exc}); {hint}",
                        transient=True)  # fmt: skip


def json_body(resp: httpx.Response, *, what: str) -> object:
    """The response's JSON, or BackendError("error_body") naming the request when it is not JSON."""
    try:
        return resp.json()
    except ValueError as exc:
        raise BackendError("error_body", f"{what} did not return JSON: {resp.text[:200]!r}") from exc
