"""A real loopback HTTP server with the OpenAI /v1/models and /v1/chat/completions endpoints.

Same style as `fake_ollama`: `queue("500", "ok")` scripts the next chat requests; behaviours are
ok, 400, 500, 503, slow, trickle (a 200 whose body comes one byte every 50 ms and never ends) and hang
(no answer until the server stops). `reply` replaces the scripted answer's text; `created` goes into the
/v1/models entries. A chat for an unknown model gets OpenAI's 404 model_not_found error.
"""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fake_ollama import REPLY, LoopbackServer


class FakeOpenAI(LoopbackServer):
    """The fake OpenAI-compatible server; `url` + "/v1" is the base_url."""

    def __init__(self, models: tuple[str, ...] = ("qwen2.5-coder-7b",), reply: str | None = None,
                 created: int = 1700000000) -> None:  # fmt: skip
        super().__init__()
        self.models = models
        self.reply = reply
        self.created = created

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"] == "/v1/chat/completions"]

    def handle(self, h: BaseHTTPRequestHandler, body: Any) -> None:
        if h.path == "/v1/models":
            data = [{"id": m, "object": "model", "owned_by": "fake", "created": self.created} for m in self.models]
            self.send_json(h, 200, {"object": "list", "data": data})
        elif h.path == "/v1/chat/completions":
            self._chat(h, body)
        else:
            self.send_json(h, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def _chat(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        behaviour = self.next_behaviour()
        if body.get("model") not in self.models:
            error = {"message": f"The model `{body.get('model')}` does not exist.", "code": "model_not_found"}
            self.send_json(h, 404, {"error": error})
            return
        if behaviour in ("400", "500", "503"):
            self.send_json(h, int(behaviour), {"error": {"message": f"fake {behaviour}", "type": "server_error"}})
            return
        if behaviour == "slow":
            time.sleep(self.slow_s)
        if behaviour in ("trickle", "hang"):
            self.never_finish(h, trickle=behaviour == "trickle")
            return
        pieces = [self.reply] if self.reply is not None else REPLY[: body.get("max_tokens", len(REPLY))]
        self.send_json(
            h,
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "".join(pieces)},
                        "finish_reason": "length" if self.reply is None and len(pieces) < len(REPLY) else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 11, "completion_tokens": len(pieces), "total_tokens": 11 + len(pieces)},
                "echo": body,
            },
        )
