"""The MLflow UI, in a real headless Chromium, on a store real `python -m runner` jobs wrote.

Two jobs (a loopback OpenAI-compatible server, tests/fake_openai.py; seed10 tasks, two and one) write one
store; a real `mlflow ui` serves it; Chromium (tests/headless_chromium.py, over the DevTools protocol) opens
the experiment's overview (it counts the jobs' traces), its Traces tab (every trace with its outcome), its
runs table (each run's dataset) and a run's page (its dataset). The screenshots are saved under the test's
tmp dir, named in the output. Where Chromium or `mlflow ui` cannot start, the test skips saying why.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import mlflow
import pytest

from runner.records import read_attempts
from tests.fake_openai import FakeOpenAI
from tests.headless_chromium import BrowserUnavailable, Chromium

ROOT = Path(__file__).resolve().parents[1]
GOOD = "```python\ndef is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n```"
UI_START_S = 180.0
UI_ENV = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
"""As `make ui` sets it: MLflow's job execution (GenAI evaluation jobs) starts eight more processes and leaves
a folder in /dev/shm at every start; looking at runs and traces needs none of it."""


def _job(server: FakeOpenAI, tmp: Path, name: str, ids: str) -> Path:
    command = [
        sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1", "model.id=coder",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): this job stays fast
        f"task_set.ids=[{ids}]", f"task_set.path={ROOT}/tasks/seed10", "sandbox.workers=1", "progress=false",
        f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts",
        f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/{name}",
    ]  # fmt: skip
    job = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stderr[-3000:]
    return tmp / name


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(store: str, port: int, log: Path) -> subprocess.Popen:
    """`mlflow ui` on the store, one worker, in its own process group, as `make ui` runs it; once it answers."""
    ui = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", store, "--host", "127.0.0.1",
         "--port", str(port), "--workers", "1"],
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True, env=UI_ENV,
    )  # fmt: skip
    deadline = time.monotonic() + UI_START_S
    while time.monotonic() < deadline:
        if ui.poll() is not None:
            pytest.skip(f"mlflow ui exited with {ui.returncode}: {log.read_text().strip().splitlines()[-1:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as answer:
                if answer.status == 200:
                    return ui
        except OSError:
            time.sleep(0.5)
    _stop(ui)
    pytest.skip(f"mlflow ui did not answer on port {port} within {UI_START_S:.0f} s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # the ui and the uvicorn worker it started
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _tidy(browser: Chromium) -> None:
    """Close the popover and the assistant panel MLflow opens over the page, so screenshots show the page."""
    browser.click("Got it")
    browser.click("Close")
    time.sleep(0.5)


def test_ui_shows_the_jobs_traces_with_outcomes_and_each_runs_dataset(tmp_path):
    server = FakeOpenAI(models=("coder",), reply=GOOD).start()
    try:
        two = _job(server, tmp_path, "two_tasks", "is_palindrome,two_sum")
        one = _job(server, tmp_path, "one_task", "is_palindrome")
    finally:
        server.stop()
    store = f"sqlite:///{tmp_path}/mlflow.db"
    client = mlflow.MlflowClient(store)
    experiment = client.get_experiment_by_name("runner").experiment_id
    runs = {r.info.run_name: r for r in client.search_runs([experiment])}
    records = read_attempts(two / "attempts.jsonl") + read_attempts(one / "attempts.jsonl")
    outcomes = {r.outcome.value for r in records}
    assert len(records) == 4 and outcomes == {"passed", "signature_mismatch"}
    digests = {name: json.loads((tmp_path / name / "dataset.json").read_text())["digest"][:36] for name in runs}
    assert len(set(digests.values())) == 2

    try:
        browser = Chromium().start()
    except BrowserUnavailable as exc:
        pytest.skip(str(exc))
    port = _free_port()
    ui = _serve(store, port, tmp_path / "mlflow_ui.log")
    base = f"http://127.0.0.1:{port}/#/experiments/{experiment}"
    shots = []
    try:
        # the overview counts the traces: "Traces" then the count, before its chart
        browser.open(base)
        browser.wait_for("Latency", pattern=rf"\nTraces\n{len(records)}\n")
        _tidy(browser)
        shots.append(browser.screenshot(tmp_path / "overview.png"))

        # the Traces tab lists every trace, with its task and its outcome assessment
        browser.open(f"{base}/traces")
        text = browser.wait_for(f"{len(records)} of {len(records)}", "outcome", "two_sum sample 0 attempt 1",
                                "is_palindrome sample 0 attempt 0", *outcomes)  # fmt: skip
        assert text.count("is_palindrome sample 0 attempt 0") == 2  # one per run
        _tidy(browser)
        shots.append(browser.screenshot(tmp_path / "traces.png"))

        # the runs table shows each run's dataset: name and digest
        browser.open(f"{base}/runs")
        browser.wait_for(*(f"seed10 ({digest})" for digest in digests.values()), "Dataset")
        _tidy(browser)
        shots.append(browser.screenshot(tmp_path / "runs.png"))

        # a run's page names its dataset
        browser.open(f"{base}/runs/{runs['two_tasks'].info.run_id}")
        browser.wait_for("Datasets", f"seed10 ({digests['two_tasks']})", "Evaluation")
        _tidy(browser)
        shots.append(browser.screenshot(tmp_path / "run.png"))
    finally:
        browser.close()
        _stop(ui)
    assert all(p.stat().st_size > 10_000 for p in shots)
    print("screenshots:", ", ".join(str(p) for p in shots))
