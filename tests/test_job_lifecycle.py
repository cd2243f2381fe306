"""Real jobs (`python -m runner` against a loopback OpenAI-compatible server) and a real MLflow store:
runs opened at start and ended KILLED on a signal, Ctrl-C, a half-migrated store, kill -9 while the store
is created, and concurrent first jobs on a fresh store."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import descendants
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-7b"


@pytest.fixture
def server():
    running = FakeOpenAI(models=(MODEL,)).start()
    yield running
    running.stop()


def job_command(tmp: Path, name: str, server: FakeOpenAI, *extra: str, sweep: bool = False) -> list[str]:
    """A one-task job (or sweep) on the loopback server, with its store, cache and output under `tmp`."""
    return [
        sys.executable, "-m", "runner", *(["-m"] if sweep else []),
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): these jobs stay fast
        "backend=openai", f"backend.base_url={server.url}/v1", "backend.max_retries=0",
        f"model.id={MODEL}", "model.name=fake", "task_set.limit=1", "sandbox.workers=1",
        f"tracking.uri=sqlite:///{tmp}/store/mlflow.db", f"tracking.artifact_root={tmp}/store/artifacts",
        f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/{name}", f"hydra.sweep.dir={tmp}/{name}", *extra,
    ]  # fmt: skip


def runs(tmp: Path) -> list:
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/store/mlflow.db")
    experiment = client.get_experiment_by_name("runner")
    return client.search_runs([experiment.experiment_id]) if experiment else []


def wait_for(condition, timeout: float = 240.0, what: str = "", proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc is None or proc.poll() is None, f"the job ended before {what}: {proc.communicate()[1][-3000:]}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status  # a zombie has exited; only its exit status is left


def running_run(tmp: Path) -> bool:
    db = tmp / "store" / "mlflow.db"
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return bool(conn.execute("SELECT 1 FROM runs WHERE status = 'RUNNING'").fetchone())
    except sqlite3.Error:
        return False


def test_sigterm_ends_a_sweeps_runs_killed_and_stops_the_workers(tmp_path, server):
    """SIGTERM to a sweep while its first job waits for the server: job run and parent run end KILLED."""
    server.slow_s = 120
    server.queue(*["slow"] * 10)
    proc = subprocess.Popen(job_command(tmp_path, "sweep", server, "seed=1,2", sweep=True), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    wait_for(lambda: len(server.chat_requests()) >= 1, what="the first generation request", proc=proc)
    wait_for(
        lambda: len(runs(tmp_path)) == 2 and descendants(proc.pid), what="the job's run and its workers", proc=proc
    )
    workers = descendants(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert "Traceback" not in err and "interrupted (SIGTERM)" in err, err[-3000:]
    assert {r.data.tags.get("runner.role", "job"): r.info.status for r in runs(tmp_path)} == {
        "sweep": "KILLED",
        "job": "KILLED",
    }
    wait_for(lambda: not any(alive(pid) for pid in workers), timeout=10, what="the sandbox workers to exit")


def test_ctrl_c_stops_in_one_line_keeps_the_records_and_exits_130(tmp_path, server):
    """SIGINT to the job's process group, as a terminal sends it: exit 130, records kept, run KILLED."""
    server.slow_s = 120
    server.queue("ok", "ok", *["slow"] * 10)  # sample 0 (first attempt and repair) finishes, sample 1 hangs
    command = job_command(tmp_path, "job", server, "sampling.n=3", "backend.max_concurrency=1")
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    attempts = tmp_path / "job" / "attempts.jsonl"
    wait_for(
        lambda: attempts.is_file() and attempts.read_text().count("\n") >= 2,
        what="the first sample's records",
        proc=proc,
    )
    wait_for(lambda: len(server.chat_requests()) >= 3, what="the hanging request", proc=proc)
    workers = descendants(proc.pid)
    assert workers, "the job runs no sandbox workers"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert [line for line in err.splitlines() if "interrupted" in line] == [
        f"interrupted (SIGINT): sandbox workers stopped; records so far kept in {attempts}"
    ]
    assert attempts.read_text().count("\n") == 2
    assert [r.info.status for r in runs(tmp_path)] == ["KILLED"]
    wait_for(lambda: not any(alive(pid) for pid in workers), timeout=10, what="the sandbox workers to exit")


def half_migrated_store(db: Path) -> str:
    """A store whose migration stopped part-way, as a kill or a race during MLflow's own in-place creation leaves it."""
    import sqlalchemy
    from alembic import command
    from mlflow.store.db.utils import _get_alembic_config
    from mlflow.store.tracking.dbmodels.initial_models import Base

    db.parent.mkdir(parents=True)
    engine = sqlalchemy.create_engine(f"sqlite:///{db}")
    Base.metadata.create_all(engine)
    revision = "0a8213491aaa"  # an early migration of MLflow's chain
    with engine.begin() as connection:
        config = _get_alembic_config(str(engine.url))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        # A later step that ran but was never recorded, as when a second process migrates at the same time:
        # MLflow's own upgrade then stops at "table trace_info already exists".
        connection.execute(sqlalchemy.text("CREATE TABLE trace_info (request_id VARCHAR(50) PRIMARY KEY)"))
    engine.dispose()
    return revision


def _head() -> str:
    from mlflow.store.db.utils import _get_latest_schema_revision

    return _get_latest_schema_revision()


def test_a_half_migrated_store_is_reported_in_one_line_before_any_work(tmp_path, server):
    revision = half_migrated_store(tmp_path / "store" / "mlflow.db")
    out = subprocess.run(job_command(tmp_path, "job", server), cwd=ROOT, capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr  # Hydra's logging goes to stdout
    assert out.returncode == 1
    assert "Traceback" not in text, text[-3000:]
    lines = [line for line in text.splitlines() if "half-migrated" in line]
    assert len(lines) == 1 and lines[0].endswith(
        f"mlflow.db is half-migrated or from another MLflow version (alembic revision {revision}, expected "
        f"{_head()}): move it away or delete it, and the next job creates a new store"
    )
    assert server.chat_requests() == []  # no sample was generated
    assert not (tmp_path / "job" / "attempts.jsonl").exists()


def test_kill_9_while_the_store_is_created_then_a_job_succeeds(tmp_path, server):
    """A fresh user cache, so the kill lands while the empty store is migrated (in the cache, for every later store)."""
    store, templates = tmp_path / "store", tmp_path / "xdg" / "runner" / "mlflow-store"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    first = subprocess.Popen(job_command(tmp_path, "killed", server), cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip

    def migrating() -> bool:  # tables are being created in a temporary file
        files = [*templates.glob(".*.creating"), *store.glob(".mlflow.db.*.creating")]
        return any(f.is_file() and f.stat().st_size > 0 for f in files)

    wait_for(migrating, what="the store's creation")
    time.sleep(0.5)
    first.kill()
    first.wait()
    assert not (store / "mlflow.db").exists()  # the kill left no store, rather than half of one
    assert not list(templates.glob("*.db"))  # nor half of an empty store to copy

    out = subprocess.run(job_command(tmp_path, "next", server), cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert [r.info.status for r in runs(tmp_path)] == ["FINISHED"]
    assert not list(store.glob(".mlflow.db.*")) and not list(templates.glob(".*"))  # no temporary file left
    assert len(list(templates.glob("*.db"))) == 1


@pytest.mark.slow
@pytest.mark.parametrize("round_", [1, 2])
def test_three_jobs_at_once_on_a_fresh_store(tmp_path, server, round_):
    """The first thing a new user may do: start jobs side by side before any store exists."""
    procs = [
        subprocess.Popen(
            job_command(tmp_path, f"job{i}", server, f"seed={i}"),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i in range(3)
    ]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    for code, err in results:
        assert code == 0, err[-3000:]
    finished = [r for r in runs(tmp_path) if r.info.status == "FINISHED"]
    assert sorted(r.data.tags["seed"] for r in finished) == ["0", "1", "2"]
    assert all("pass_at_1_first" in r.data.metrics for r in finished)
