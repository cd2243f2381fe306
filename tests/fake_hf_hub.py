"""A real loopback HTTP server that answers huggingface_hub's file download like the Hub does.

`HEAD/GET /{repo}/resolve/{revision}/{file}` for the files given: X-Repo-Commit, ETag (the content's
SHA-256, as the Hub gives for LFS files) and the body. Every request is recorded in `requests`.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """Serves `files` ({"owner/repo/file.gguf": bytes}) on 127.0.0.1:<free port>; `url` is the HF_ENDPOINT."""

    def __init__(self, files: dict[str, bytes], etags: dict[str, str] | None = None) -> None:
        self.files = files
        self.etags = etags or {}  # path -> the ETag to claim instead of the content's SHA-256 (a lying mirror)
        self.requests: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                pass

            def do_HEAD(self) -> None:  # noqa: N802
                outer._answer(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                outer._answer(self, body=True)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        self.requests.append((h.command, h.path))
        repo_and_rest = h.path.split("?")[0].lstrip("/")
        parts = repo_and_rest.split("/")  # owner, repo, "resolve", revision, file...
        path = "/".join(parts[:2] + parts[4:])
        content = self.files.get(path) if parts[2:3] == ["resolve"] else None
        if content is None:
            h.send_response(404)
            h.send_header("X-Error-Code", "EntryNotFound")
            h.send_header("X-Repo-Commit", COMMIT)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(200)
        h.send_header("X-Repo-Commit", COMMIT)
        h.send_header("ETag", f'"{self.etags.get(path) or hashlib.sha256(content).hexdigest()}"')
        h.send_header("Content-Length", str(len(content)))
        h.end_headers()
        if body:
            h.wfile.write(content)
