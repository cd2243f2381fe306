"""A real loopback HTTP server that answers huggingface_hub's file download like the Hub does.

`HEAD/GET /{repo}/resolve/{revision}/{file}` for the files given: X-Repo-Commit, ETag (the content's
SHA-256, as the Hub gives for LFS files) and the body. Every request is recorded in `requests`.
"""

from __future__ import annotations

import hashlib
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_ollama import LoopbackServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub(LoopbackServer):
    """Serves `files` ({"owner/repo/file.gguf": bytes}); `url` is the HF_ENDPOINT."""

    def __init__(self, files: dict[str, bytes], etags: dict[str, str] | None = None) -> None:
        super().__init__()
        self.files = files
        self.etags = etags or {}  # path -> the ETag to claim instead of the content's SHA-256 (a lying mirror)

    def resolves(self) -> list[tuple[str, str]]:
        """(method, path) of the requests for files (not the client's other calls)."""
        return [(r["method"], r["path"]) for r in self.requests if "/resolve/" in r["path"]]

    def handle(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        parts = h.path.split("?")[0].lstrip("/").split("/")  # owner, repo, "resolve", revision, file...
        path = "/".join(parts[:2] + parts[4:])
        content = self.files.get(path) if parts[2:3] == ["resolve"] else None
        h.send_response(200 if content is not None else 404)
        h.send_header("X-Repo-Commit", COMMIT)
        if content is None:
            h.send_header("X-Error-Code", "EntryNotFound")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_header("ETag", f'"{self.etags.get(path) or hashlib.sha256(content).hexdigest()}"')
        h.send_header("Content-Length", str(len(content)))
        h.end_headers()
        if h.command == "GET":
            h.wfile.write(content)
