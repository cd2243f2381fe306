"""GGUF files from the Hugging Face Hub: `model.id: hf:OWNER/REPO/FILE[@REVISION]`, fetched once into the HF cache.

The file is downloaded with `huggingface_hub.hf_hub_download` on first use and found in the Hugging Face
cache afterwards without any request (HF_HOME / HF_HUB_CACHE say where; HF_ENDPOINT names a mirror;
HF_HUB_OFFLINE=1 forbids the network). `model.sha256` pins the file's content: a download whose SHA-256
differs is deleted and fails the job.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

from runner.file_hash import file_sha256
from runner.generation.backends.base import BackendError

PREFIX = "hf:"
DEFAULT_ENDPOINT = "https://huggingface.co"


def parse_hub_id(model_id: str) -> tuple[str, str, str]:
    """(repo_id, filename, revision) of "hf:OWNER/REPO/FILE[@REVISION]" (revision defaults to "main")."""
    ref, _, revision = model_id.removeprefix(PREFIX).partition("@")
    owner, _, rest = ref.partition("/")
    repo, _, filename = rest.partition("/")
    if not (owner and repo and filename.endswith(".gguf")):
        raise BackendError("config", f"model.id {model_id!r} is not hf:OWNER/REPO/FILE.gguf[@REVISION]")
    return f"{owner}/{repo}", filename, revision or "main"


def hub_cache_dir() -> Path:
    """The Hugging Face cache as huggingface_hub finds it, read now (not at import) from the environment."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface"
    return Path(home).expanduser() / "hub"


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def pinned_hex(sha256: str) -> str:
    """The hex digits of a pinned SHA-256 given as "HEX" or "sha256:HEX" ("" if none is pinned)."""
    return sha256.strip().lower().removeprefix("sha256:")


def hub_gguf(model_id: str, sha256: str = "") -> Path:
    """The cached GGUF file of `model_id`, downloaded first if absent; BackendError("model_missing") otherwise."""
    from huggingface_hub import hf_hub_download, try_to_load_from_cache

    repo_id, filename, revision = parse_hub_id(model_id)
    cache = hub_cache_dir()
    want = pinned_hex(sha256)
    cached = try_to_load_from_cache(repo_id, filename, cache_dir=cache, revision=revision)
    if isinstance(cached, str) and _blob_matches(Path(cached), want):
        return Path(cached)
    endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    if not _offline():
        print(f"fetching {filename} from {endpoint}/{repo_id} into {cache} (first use)", file=sys.stderr)
        if endpoint_refuses(endpoint):  # said now, not after huggingface_hub's retries (about 23 s)
            raise BackendError("model_missing", _download_failure(model_id, endpoint, cache, ConnectionError()))
    try:
        with _quiet_hub_logging():
            path = Path(
                hf_hub_download(
                    repo_id,
                    filename,
                    revision=revision,
                    cache_dir=cache,
                    endpoint=endpoint,
                    local_files_only=_offline(),
                    force_download=isinstance(cached, str) and not _offline(),  # cached, but not the pinned content
                )  # fmt: skip
            )
    except Exception as exc:  # huggingface_hub's errors are many (offline, HTTP, not found); each becomes one line
        raise BackendError("model_missing", _download_failure(model_id, endpoint, cache, exc)) from None
    if want:
        got = file_sha256(path)
        if got != want:
            _discard(path)
            raise BackendError(
                "model_missing",
                f"{filename} from {endpoint}/{repo_id} has SHA-256 {got}, but the model config pins {want}: "
                "the download was deleted; check model.id and model.sha256 (or HF_ENDPOINT)",
            )
    return path


PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def endpoint_refuses(endpoint: str, timeout: float = 3.0) -> bool:
    """True if the endpoint's host name does not resolve or its port refuses a connection: final answers.

    A timeout or any other error is left to huggingface_hub's own retries, and behind a proxy (any of
    PROXY_VARIABLES set) the endpoint is never dialled directly, so this says False.
    """
    if any(os.environ.get(name) for name in PROXY_VARIABLES):
        return False
    url = urllib.parse.urlsplit(endpoint)
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except (ConnectionRefusedError, socket.gaierror):
        return True
    except (OSError, ValueError):
        return False
    return False


@contextlib.contextmanager
def _quiet_hub_logging() -> Iterator[None]:
    """huggingface_hub logs each retry of an unreachable Hub as a warning; the one-line error says it all."""
    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _blob_matches(path: Path, want: str) -> bool:
    """A cached file is trusted if no hash is pinned, or if its blob is named by the pinned hash.

    An LFS file's cache blob is named by its SHA-256 (the Hub's ETag), and a download whose content does
    not match the pin is deleted, so the name suffices and the file is not re-hashed on every use.
    """
    return path.is_file() and (not want or path.resolve().name == want)


def _discard(path: Path) -> None:
    blob = path.resolve()
    path.unlink(missing_ok=True)
    blob.unlink(missing_ok=True)


def _download_failure(model_id: str, endpoint: str, cache: Path, exc: Exception) -> str:
    name = type(exc).__name__
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    if name in ("LocalEntryNotFoundError", "OfflineModeIsEnabled") or isinstance(exc, ConnectionError):
        why = "HF_HUB_OFFLINE is set" if _offline() else f"{endpoint} cannot be reached"
        return (
            f"{model_id} is not in the Hugging Face cache {cache} and {why}: connect once to download it "
            "(or set HF_ENDPOINT to a mirror, or HF_HOME to a cache that has it)"
        )
    return f"cannot download {model_id} from {endpoint}: {name}: {detail}"
