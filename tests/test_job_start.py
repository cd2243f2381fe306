"""The first seconds of a real `python -m runner` job (loopback OpenAI server, fresh store and user cache) say
what it is doing: a line per phase on stderr, in order, the first within 2 s; no MLflow or HTTP INFO lines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from runner.job.phases import is_phase_line
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-7b"
TASKS = 3


@pytest.fixture
def server():
    running = FakeOpenAI(models=(MODEL,)).start()
    yield running
    running.stop()


def timed_stderr(command: list[str], env: dict) -> tuple[int, list[tuple[float, str]], str]:
    """Run `command`; (exit code, each stderr line with its arrival in seconds since the start, stdout)."""
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    for line in proc.stderr:
        lines.append((time.monotonic() - started, line.rstrip("\n")))
    code = proc.wait(timeout=300)
    reader.join(timeout=10)
    return code, lines, "".join(out)


def _index(texts: list[str], pattern: str) -> int:
    found = [i for i, text in enumerate(texts) if re.search(pattern, text)]
    assert found, f"no line matches {pattern!r}:\n" + "\n".join(texts)
    return found[0]


def test_each_phase_is_a_line_in_order_the_first_within_2_s(tmp_path, server):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}  # the store is created from scratch
    command = [
        sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): this job stays fast
        "backend.max_retries=0", f"model.id={MODEL}", "model.name=fake", f"task_set.limit={TASKS}",
        "sandbox.workers=1", f"tracking.uri=sqlite:///{tmp_path}/store/mlflow.db",
        f"tracking.artifact_root={tmp_path}/store/artifacts", f"cache_dir={tmp_path}/cache",
        f"hydra.run.dir={tmp_path}/job",
    ]  # fmt: skip
    code, lines, stdout = timed_stderr(command, env)
    texts = [text for _, text in lines]
    assert code == 0, "\n".join(texts)
    assert lines and is_phase_line(lines[0][1]), texts
    assert lines[0][0] < 2.0, f"the first line came {lines[0][0]:.1f}s after the start: {lines[0][1]}"

    phases = [text for text in texts if is_phase_line(text)]
    job = _index(phases, rf"\] job {re.escape(str(tmp_path / 'job'))}: model fake on openai, task set seed10$")
    tasks = _index(phases, rf"\] task set seed10: {TASKS} task\(s\) x 1 sample\(s\)$")
    asking = _index(phases, rf"\] asking {re.escape(server.url)}/v1 for the model {MODEL} \(openai\)$")
    ready = _index(phases, rf"\] model ready in [\d.]+s: {MODEL} \(openai")
    creating = _index(phases, r"\] tracking store: creating .*mlflow\.db")
    store = _index(phases, r"\] tracking store ready in [\d.]+s: sqlite:///")
    sent = _index(phases, rf"\] first request sent \({TASKS} sample\(s\) to generate, up to \d+ at a time\)$")
    answer = _index(phases, r"\] first answer in [\d.]+s: \d+ tokens")
    sandbox = _index(phases, r"\] sandbox ready in [\d.]+s: 1 worker\(s\), isolation: ")
    gold = _index(phases, rf"\] gold check: running the {TASKS} reference solutions")
    first_gold = _index(phases, rf"\] gold check 1/{TASKS}$")
    last_gold = _index(phases, rf"\] gold check {TASKS}/{TASKS} in [\d.]+s$")
    gold_result = _index(phases, rf"\] gold check: {TASKS}/{TASKS} references pass their own tests$")
    assert job < tasks < asking < ready < sent < answer
    assert creating < store < sent  # no sample is generated before the store is known to be usable
    assert gold < first_gold < last_gold < gold_result
    assert sandbox < last_gold  # the gold check runs in the sandbox
    progress = _index(texts, rf"^\[#*\.*\] \d+/{TASKS} samples")
    assert texts.index(phases[answer]) < progress

    assert not any("Creating initial MLflow database tables" in t or "alembic" in t for t in texts + [stdout]), texts
    assert "HTTP Request:" not in stdout, stdout
    assert "ETA" in texts[-1] and f"{TASKS}/{TASKS} samples" in texts[-1]


def test_progress_false_silences_the_phase_lines(tmp_path, server):
    command = [
        sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1", f"model.id={MODEL}",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): this job stays fast
        "task_set.limit=1", "sandbox.workers=1", "tracking=off", "progress=false", f"cache_dir={tmp_path}/cache",
        f"hydra.run.dir={tmp_path}/job",
    ]  # fmt: skip
    code, lines, _ = timed_stderr(command, dict(os.environ))
    assert code == 0 and not [text for _, text in lines if is_phase_line(text) or "ETA" in text], lines
