"""A one-line progress display: samples done, pass count and ETA."""

from __future__ import annotations

import sys
import time


class Progress:
    """Prints `done/total, passed, ETA` to stderr; redraws in place on a terminal, else every few seconds."""

    def __init__(self, total: int, label: str = "samples", enabled: bool = True, stream=sys.stderr) -> None:
        self.total, self.label, self.enabled, self.stream = total, label, enabled, stream
        self.done = self.passed = 0
        self.started = time.monotonic()
        self._last_print = 0.0
        self._tty = hasattr(stream, "isatty") and stream.isatty()

    def advance(self, passed: bool) -> None:
        """Count one finished unit of work."""
        self.done += 1
        self.passed += int(passed)
        now = time.monotonic()
        if self.enabled and (self._tty or now - self._last_print > 5 or self.done == self.total):
            self._last_print = now
            end = "\n" if not self._tty or self.done == self.total else ""
            self.stream.write(("\r" if self._tty else "") + self.line() + end)
            self.stream.flush()

    def line(self) -> str:
        """The current progress text."""
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        return (
            f"[{bar}] {self.done}/{self.total} {self.label}, {self.passed} passed, "
            f"elapsed {_clock(elapsed)}, ETA {_clock(eta)}"
        )


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
