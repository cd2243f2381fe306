"""A real loopback HTTP server that speaks enough of the Ollama API to test the ollama backend.

It listens on 127.0.0.1 on a free port, in a thread. /api/chat streams NDJSON; what the next chat
requests do is scripted with `queue(...)` (one behaviour per request, then "ok"):

  ok           stream an answer; the final line echoes the request body under "echo"
  400 500 503  that HTTP status with an Ollama-style {"error": ...} body
  cut          two chunks, then the connection closes (close-delimited body, no `done`)
  cut_chunked  two chunks, then the connection closes in the middle of the chunked body
  error_line   two chunks, then an {"error": ...} line
  slow         sleep `slow_s` seconds, then answer
  trickle      a 200 whose body comes one byte every 50 ms and never ends
  hang         no answer at all until the server stops
A chat with think=true for a model in `no_think` gets 400 "does not support thinking".
A chat for a model not in `models` gets 404 {"error": "model 'x' not found"}, as Ollama does.
As Ollama with OLLAMA_NUM_PARALLEL, `parallel=N` answers at most N chats at once (the rest wait their turn),
each taking `answer_s`; the final line reports the time waited in total_duration, beside eval_duration.

For the tests of several servers (tests/test_server_pool.py), on every `LoopbackServer`: `delay_s` holds
each generation request that long; `in_flight` / `max_in_flight` count generation requests being answered,
`spans` holds each one's (start, end) in time.monotonic() seconds, in the order they ended;
`die_after=N` makes the server die (`kill`) when the generation request after the N-th arrives.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = ["def", " add", "(a,", " b):", "\n", "    return", " a", " +", " b"]
GENERATION_PATHS = ("/api/chat", "/v1/chat/completions")


class LoopbackServer:
    """A ThreadingHTTPServer on 127.0.0.1:<free port> whose handler calls `self.handle(handler)`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []  # {"method", "path", "body", "headers"} of every request
        self.behaviours: list[str] = []
        self.slow_s = 2.0
        self.delay_s = 0.0
        self.in_flight = self.max_in_flight = self.generations = 0
        self.spans: list[tuple[float, float]] = []
        self.die_after: int | None = None
        self.killed = threading.Event()
        self._connections: set[Any] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with outer._lock:
                    outer._connections.add(self.connection)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
                pass

            def do_GET(self) -> None:  # noqa: N802
                outer._dispatch(self, None)

            def do_HEAD(self) -> None:  # noqa: N802
                outer._dispatch(self, None)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                outer._dispatch(self, json.loads(raw) if raw else None)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                if not outer.killed.is_set():  # after a kill, the cut connections' errors are expected
                    super().handle_error(request, client_address)

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends hanging and trickling answers
        if not self.killed.is_set():
            self._httpd.shutdown()
            self._httpd.server_close()

    def kill(self) -> None:
        """Die as a crashed server does: the port refuses connections, every open connection is cut."""
        with self._lock:
            if self.killed.is_set():
                return
            self.killed.set()
            connections = list(self._connections)
        self._httpd.shutdown()
        self._httpd.server_close()
        for sock in connections:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def queue(self, *behaviours: str) -> None:
        """Script the next requests to the generation endpoint."""
        with self._lock:
            self.behaviours.extend(behaviours)

    def next_behaviour(self) -> str:
        with self._lock:
            return self.behaviours.pop(0) if self.behaviours else "ok"

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]

    def _dispatch(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        generation = h.path in GENERATION_PATHS
        started = time.monotonic()
        with self._lock:
            self.requests.append({"method": h.command, "path": h.path, "body": body, "headers": dict(h.headers)})
            if generation:
                self.generations += 1
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            dies = generation and self.die_after is not None and self.generations > self.die_after
        try:
            if dies:
                self.kill()  # this request, too, gets no answer
                return
            if generation and self.delay_s:
                time.sleep(self.delay_s)
            self.handle(h, body)
        except OSError:
            pass  # the client gave up (timeout tests), or the server was killed under the request
        finally:
            if generation:
                with self._lock:
                    self.in_flight -= 1
                    self.spans.append((started, time.monotonic()))

    def handle(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        raise NotImplementedError

    def never_finish(self, h: BaseHTTPRequestHandler, trickle: bool) -> None:
        """Answer nothing (hang), or a 200 whose body never ends (trickle), until the server stops."""
        if trickle:
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(10**9))
            h.end_headers()
        while not self._stopping.wait(0.05):
            if trickle:
                h.wfile.write(b" ")
                h.wfile.flush()

    @staticmethod
    def send_json(h: BaseHTTPRequestHandler, status: int, data: Any) -> None:
        payload = json.dumps(data).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)


class FakeOllama(LoopbackServer):
    """The fake Ollama server; `models` maps model name to its digest."""

    def __init__(self, models: dict[str, str] | None = None) -> None:
        super().__init__()
        self.version = "0.9.9-fake"
        self.models = models if models is not None else {"gemma3:4b": "ab" * 32}
        self.no_think: set[str] = set()  # models that answer think=true with 400, as Ollama does
        self.parallel = 0  # chats answered at once (0 = any number)
        self.answer_s = 0.0  # how long each answer takes, in its slot
        self._slots: threading.Semaphore | None = None

    def known(self, name: str) -> bool:
        """Ollama's lookup: a name without a tag means `:latest`."""
        return name in self.models or f"{name}:latest" in self.models

    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"] == "/api/chat"]

    def handle(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        if h.path == "/api/version":
            self.send_json(h, 200, {"version": self.version})
        elif h.path == "/api/tags":
            models = [{"name": n, "model": n, "digest": d, "size": 1} for n, d in self.models.items()]
            self.send_json(h, 200, {"models": models})
        elif h.path == "/api/show":
            if self.known(body.get("model", "")):
                self.send_json(h, 200, {"modelfile": "FROM x", "details": {"family": "fake"}})
            else:
                self.send_json(h, 404, {"error": f"model '{body.get('model')}' not found"})
        elif h.path == "/api/chat":
            self._chat(h, body)
        else:
            self.send_json(h, 404, {"error": "404 page not found"})

    def _slot(self) -> Any:
        """One of the `parallel` slots, held while answering (no limit when parallel is 0)."""
        if not self.parallel:
            return contextlib.nullcontext()
        with self._lock:
            if self._slots is None:
                self._slots = threading.Semaphore(self.parallel)
        return self._slots

    def _chat(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        arrived = time.monotonic()
        with self._slot():
            waited = time.monotonic() - arrived
            time.sleep(self.answer_s)
            self._answer(h, body, waited)

    def _answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any], waited: float) -> None:
        behaviour = self.next_behaviour()
        if not self.known(body.get("model", "")):
            self.send_json(h, 404, {"error": f"model '{body.get('model')}' not found"})
            return
        if body.get("think") and body["model"] in self.no_think:
            self.send_json(h, 400, {"error": f'"{body["model"]}" does not support thinking'})
            return
        if behaviour in ("400", "500", "503"):
            messages = {"400": "invalid options", "500": "llama runner process has terminated",
                        "503": "server busy, please try again.  maximum pending requests exceeded"}  # fmt: skip
            self.send_json(h, int(behaviour), {"error": messages[behaviour]})
            return
        if behaviour == "slow":
            time.sleep(self.slow_s)
        if behaviour in ("trickle", "hang"):
            self.never_finish(h, trickle=behaviour == "trickle")
            return
        options = body.get("options") or {}
        pieces = REPLY[: options.get("num_predict", len(REPLY))]
        lines = []
        if body.get("think"):
            lines.append({"message": {"role": "assistant", "content": "", "thinking": "Let me think."}, "done": False})
        lines += [{"message": {"role": "assistant", "content": p}, "done": False} for p in pieces]
        prompt_words = sum(len(m["content"].split()) for m in body["messages"])
        final = {
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "length" if len(pieces) < len(REPLY) else "stop",
            "prompt_eval_count": prompt_words,
            "eval_count": len(pieces),
            "total_duration": int((waited + self.answer_s) * 1e9),
            "load_duration": 0,
            "prompt_eval_duration": 0,
            "eval_duration": int(self.answer_s * 1e9),
            "echo": body,
        }
        if behaviour == "cut":
            h.send_response(200)
            h.send_header("Content-Type", "application/x-ndjson")
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(b"".join(json.dumps(x).encode() + b"\n" for x in lines[:2]))
            h.close_connection = True
            return
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        if behaviour == "cut_chunked":
            for x in lines[:2]:
                self._chunk(h, json.dumps(x).encode() + b"\n")
            h.wfile.write(b'40\r\n{"message"')  # a chunk promised 64 bytes; the connection dies
            h.wfile.flush()
            h.close_connection = True
            return
        if behaviour == "error_line":
            lines = [*lines[:2], {"error": "an error was encountered while running the model: unexpected EOF"}]
        else:
            lines.append(final)
        for x in lines:
            self._chunk(h, json.dumps(x).encode() + b"\n")
        self._chunk(h, b"")

    @staticmethod
    def _chunk(h: BaseHTTPRequestHandler, data: bytes) -> None:
        h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        h.wfile.flush()
