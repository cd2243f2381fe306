"""A one-line progress display: samples done, pass count and an ETA from measured throughput.

The ETA is never extrapolated from the first sample alone, nor from time spent before the work began
(create `Progress` when the work starts). `Throughput` estimates it:
- from the samples finished, once MIN_SAMPLES of them have (and, with `parallel` running at once, a
  whole first wave of `parallel`): the samples per second since the work started;
- before that, once a sample has finished, from the answers generated so far (`answer`): their mean
  length in tokens over the tokens per second one request gets, times the answers a sample takes (a
  passed sample one, a failed one 1 + `repairs`, in the proportion of the samples finished), for the
  samples still to come, `parallel` at a time;
- otherwise the line says "ETA estimating…".
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

MIN_SAMPLES = 3
"""Samples finished before their rate gives the ETA."""
MIN_ANSWERS = 2
"""Answers measured (tokens and seconds) before their throughput gives the ETA."""
ESTIMATING = "ETA estimating…"


class Throughput:
    """What the ETA is computed from: when the work started, the answers generated and the samples finished."""

    def __init__(self, parallel: int = 1, repairs: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.parallel, self.repairs = max(1, parallel), max(0, repairs)
        self.clock = clock
        self.started = clock()
        self.answers = self.tokens = 0
        self.answer_seconds = 0.0

    def answer(self, tokens: int, seconds: float) -> None:
        """Count one generated answer: its completion tokens and the wall time of its request."""
        if tokens > 0 and seconds > 0:
            self.answers += 1
            self.tokens += tokens
            self.answer_seconds += seconds

    def tokens_per_second(self) -> float | None:
        """Completion tokens per second of one request, over the answers so far (None before any)."""
        return self.tokens / self.answer_seconds if self.answers else None

    def eta(self, done: int, total: int, passed: int = 0, now: float | None = None) -> float | None:
        """Seconds until `total` samples are done, `done` of them now (`passed` of those passed); None while
        there is too little to go on."""
        remaining = total - done
        if remaining <= 0:
            return 0.0
        elapsed = (self.clock() if now is None else now) - self.started
        if done >= min(total, max(MIN_SAMPLES, self.parallel)) and elapsed > 0:
            return elapsed / done * remaining
        if done and self.answers >= MIN_ANSWERS:
            answer_s = (self.tokens / self.answers) / self.tokens_per_second()  # mean length / tokens per second
            answers_per_sample = (passed + (done - passed) * (1 + self.repairs)) / done
            return math.ceil(remaining / self.parallel) * answers_per_sample * answer_s
        return None


class Progress:
    """Prints `done/total, passed, ETA` to stderr; redraws in place on a terminal, else every few seconds."""

    def __init__(
        self,
        total: int,
        label: str = "samples",
        enabled: bool = True,
        stream=sys.stderr,
        throughput: Throughput | None = None,
        passed_label: str = "passed",
    ) -> None:
        """`passed_label` names what `advance(True)` counts ("passed"; "measured" for efficiency)."""
        self.total, self.label, self.enabled, self.stream = total, label, enabled, stream
        self.passed_label = passed_label
        self.done = self.passed = 0
        self.throughput = throughput or Throughput()
        self.started = self.throughput.started
        self._last_print = 0.0
        self._tty = hasattr(stream, "isatty") and stream.isatty()

    def advance(self, passed: bool) -> None:
        """Count one finished unit of work."""
        self.done += 1
        self.passed += int(passed)
        now = self.throughput.clock()
        if self.enabled and (self._tty or now - self._last_print > 5 or self.done == self.total):
            self._last_print = now
            end = "\n" if not self._tty or self.done == self.total else ""
            self.stream.write(("\r" if self._tty else "") + self.line() + end)
            self.stream.flush()

    def line(self) -> str:
        """The current progress text."""
        now = self.throughput.clock()
        elapsed = now - self.started
        eta = self.throughput.eta(self.done, self.total, self.passed, now)
        rate = self.throughput.tokens_per_second()
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        bar = "#" * filled + "." * (width - filled)
        return (
            f"[{bar}] {self.done}/{self.total} {self.label}, {self.passed} {self.passed_label}, "
            f"elapsed {_clock(elapsed)}"
            + (f", {rate:.0f} tokens/s a request" if rate else "")
            + (f", ETA {_clock(eta)}" if eta is not None else f", {ESTIMATING}")
        )


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
