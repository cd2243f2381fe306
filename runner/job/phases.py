"""What a starting job is doing, one line per phase on stderr, each with the seconds since the process began.

The phases, as a job (runner.job.run) reaches them: the job itself (its folder, tasks, model), loading the
model (or checking its server), the model ready, the sandbox ready, the gold check (i/N, then its
result), the first request sent and the first answer. Model loading, the gold check and the sandbox
warm-up overlap, so their lines interleave; each phase's own lines come in order. `progress=false`
silences them with the progress line.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from runner.job.progress import Throughput


def _process_started() -> float:
    """The `time.monotonic()` reading at which this process began (from Linux's /proc), else the present one."""
    try:
        start_ticks = int(Path("/proc/self/stat").read_text().rpartition(")")[2].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.monotonic()
    return time.monotonic() - max(0.0, age)


STARTED = _process_started()
"""When the process began: the phase lines count their seconds from here."""
GOLD_EVERY_S = 2.0
"""The gold check's i/N line is printed for the first task, then at most this often, and for the last."""

_IN_PROCESS = {"llamacpp": "loading the model {id} into llama.cpp (the first use downloads it)",
               "replay": "reading the answers to replay for {name}"}  # fmt: skip
_SERVER = "asking {url} for the model {id} ({backend})"

T = TypeVar("T")
R = TypeVar("R")


PREFIX = "[runner "


def is_phase_line(line: str) -> bool:
    """Whether a line of a job's stderr is one of its phase lines (`[runner 1.2s] ...`)."""
    return line.startswith(PREFIX) and "s] " in line


class Phases:
    """Writes `[runner 1.2s] <phase>` lines to `stream` (stderr); thread-safe; silent when not `enabled`."""

    def __init__(self, enabled: bool = True, stream=None, clock: Callable[[], float] = time.monotonic) -> None:
        self.enabled, self.clock = enabled, clock
        self.stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        """Print one phase line."""
        if not self.enabled:
            return
        with self._lock:
            self.stream.write(f"{PREFIX}{self.clock() - STARTED:.1f}s] {text}\n")
            self.stream.flush()

    def job(self, out_dir: Any, model: str, backend: str, task_set: str) -> None:
        """The job's first line: where it writes, what it runs."""
        self.say(f"job {out_dir}: model {model} on {backend}, task set {task_set}")

    def tasks(self, task_set: str, tasks: int, samples: int) -> None:
        """The task set loaded."""
        self.say(f"task set {task_set}: {tasks} task(s) x {samples} sample(s)")

    def loading_model(self, backend: str, model_id: str, model_name: str, base_url: Any) -> None:
        """The model's preflight began: loaded in-process, or its server asked."""
        template = _IN_PROCESS.get(backend, _SERVER)
        url = ", ".join(base_url) if isinstance(base_url, list) else base_url
        self.say(template.format(id=model_id, name=model_name, url=url, backend=backend))

    def model_ready(self, identity: dict, seconds: float) -> None:
        """The model answered its preflight."""
        version = f", {identity['server_version']}" if identity.get("server_version") else ""
        model, backend = str(identity.get("model", "?")), identity.get("backend", "?")
        model = Path(model).name if model.startswith("/") else model  # an in-process model: its file
        self.say(f"model ready in {seconds:.1f}s: {model} ({backend}{version})")

    async def watch_sandbox(self, pool: Any, workers: int) -> None:
        """Say `sandbox ready` once every worker of `pool` has warmed up (polls; never blocks the loop)."""
        started = self.clock()
        while not pool.warm():
            await asyncio.sleep(0.05)
        protections = ", ".join(k for k, v in sorted(pool.isolation.items()) if v) or "none"
        self.say(f"sandbox ready in {self.clock() - started:.1f}s: {workers} worker(s), isolation: {protections}")


def gold_with_progress(tasks: Sequence[T], check: Callable[[T], R], phases: Phases, threads: int = 4) -> list[R]:
    """`check` on every task, `threads` at a time (as runner.judging.gold_check runs them), with `gold check i/N`
    lines; the results in task order."""
    total, done, last = len(tasks), 0, [0.0]
    lock = threading.Lock()
    started = phases.clock()
    phases.say(f"gold check: running the {total} reference solutions against their own tests")

    def one(task: T) -> R:
        nonlocal done
        result = check(task)
        with lock:
            done += 1
            now = phases.clock()
            if done in (1, total) or now - last[0] >= GOLD_EVERY_S:
                last[0] = now
                phases.say(f"gold check {done}/{total}" + (f" in {now - started:.1f}s" if done == total else ""))
        return result

    from runner.judging.gold_check import check_each

    return check_each(tasks, one, threads)


class ComposingNotice:
    """A line saying the config is being composed, printed only if composing takes longer than `after_s`.

    It lives here, not in runner/__main__.py, so that the job function a launcher pickles (joblib, Ray pickle
    `__main__`'s functions by value, with the globals they use) refers to no timer thread."""

    _timer: threading.Timer | None = None

    @classmethod
    def start(cls, after_s: float) -> None:
        """Print the line after `after_s` seconds unless `cancel` comes first."""
        cls._timer = threading.Timer(after_s, lambda: Phases().say("composing the config (conf/, overrides)"))
        cls._timer.daemon = True
        cls._timer.start()

    @classmethod
    def cancel(cls) -> None:
        """The job says what it does from here on (or composing failed): no line."""
        if cls._timer is not None:
            cls._timer.cancel()


class Announced:
    """A backend whose first request and first answer are announced, and whose answers feed a Throughput."""

    def __init__(self, backend: Any, phases: Phases, throughput: Throughput, samples: int, parallel: int) -> None:
        self._backend, self._phases, self._throughput = backend, phases, throughput
        self._samples, self._parallel = samples, parallel
        self._sent = self._answered = False

    async def generate(self, messages: list[dict[str, str]], options: Any) -> Any:
        """The wrapped backend's `generate`, announced the first time; every answer counted."""
        if not self._sent:
            self._sent = True
            self._phases.say(f"first request sent ({self._samples} sample(s) to generate, up to {self._parallel} "
                             "at a time)")  # fmt: skip
        generation = await self._backend.generate(messages, options)
        self._throughput.answer(generation.completion_tokens, generation.duration_s)
        if not self._answered:
            self._answered = True
            rate = generation.completion_tokens / generation.duration_s if generation.duration_s > 0 else 0.0
            self._phases.say(f"first answer in {generation.duration_s:.1f}s: {generation.completion_tokens} tokens "
                             f"({rate:.0f} tokens/s)")  # fmt: skip
        return generation

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)
