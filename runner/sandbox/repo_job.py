"""A repo task's test run as the pool sends it to a worker, and what the worker observed of it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from runner.sandbox.protocol import authenticated


@dataclass(frozen=True)
class RepoRun:
    """A repo task's run: the copy's files (patch applied), the environment's Python, the node ids."""

    files: dict[str, bytes]
    python: str
    node_ids: tuple[str, ...]
    timeout_s: float

    def reply_budget(self, timeout_s: float) -> float:
        """How long the pool waits for the worker's reply: the run's own wall limit and clean-up (not the pool's)."""
        return self.timeout_s + 40.0


@dataclass
class RepoRunResult:
    """What the trusted worker observed: the authenticated messages and how the child ended."""

    messages: list[dict] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    timed_out: bool = False
    output_exceeded: bool = False
    status: int | None = None
    leftovers: bool = False
    output: str = ""
    isolation: dict[str, bool] = field(default_factory=dict)
    duration_s: float = 0.0
    harness_error: str = ""

    def feed(self, nonce: str, data: bytes) -> None:
        """Decode complete channel lines; anything not carrying the nonce is a violation."""
        for payload in authenticated(data.split(b"\n"), nonce, self.violations):
            try:
                message = json.loads(payload)
            except ValueError:
                message = None
            if not isinstance(message, dict) or not isinstance(message.get("k"), str):
                self.violations.append("a malformed message on the verdict channel")
                continue
            self.messages.append(message)
