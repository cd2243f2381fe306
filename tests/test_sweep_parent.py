"""How a job finds its sweep's parent run from another process or node, and the SQLite store under
parallel writers: WAL mode, and calls that wait out `database is locked` (real SQLite locks)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from mlflow.tracking import MlflowClient
from omegaconf import open_dict

from runner.tracking.local_store import is_locked, prepare_sqlite_store, retry_locked, tracking_client
from runner.tracking.runs import PARENT_ENV, SWEEP_ENV, SWEEP_TAG, JobRun, ensure_store
from runner.tracking.sweep_callback import MlflowSweepCallback, SweepError
from tests.test_tracking import make_cfg, sweep_cfg


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv(PARENT_ENV, raising=False)
    monkeypatch.delenv(SWEEP_ENV, raising=False)


def test_a_job_elsewhere_finds_its_parent_by_the_sweep_id_on_the_store(tmp_path, monkeypatch):
    """No marker file and no parent run id in its environment (another node): the sweep id is enough."""
    sweep = tmp_path / "multirun" / "s1"
    cfg = sweep_cfg(tmp_path, sweep)
    callback = MlflowSweepCallback()
    callback.on_multirun_start(cfg)
    override = cfg.hydra.overrides.hydra[-1]  # what Hydra applies to every job's config
    assert override.startswith(f"++hydra.job.env_set.{SWEEP_ENV}=")
    sweep_id = override.split("=", 1)[1].strip("'")
    client = MlflowClient(tracking_uri=make_cfg(tmp_path).tracking.uri)
    assert client.get_run(callback.run_id).data.tags[SWEEP_TAG] == sweep_id

    monkeypatch.delenv(PARENT_ENV)
    monkeypatch.setenv(SWEEP_ENV, sweep_id)
    job = JobRun(make_cfg(tmp_path), tmp_path / "elsewhere" / "0_tiny_s1")  # no marker file next to it
    tags = client.get_run(job.run_id).data.tags
    assert tags["mlflow.parentRunId"] == callback.run_id and tags[SWEEP_TAG] == sweep_id
    job.end("FINISHED")
    monkeypatch.setenv(SWEEP_ENV, "0123456789abcdef")  # another sweep's id: not nested under this one
    other = JobRun(make_cfg(tmp_path), tmp_path / "elsewhere" / "1_tiny_s2")
    assert "mlflow.parentRunId" not in client.get_run(other.run_id).data.tags
    other.end("FINISHED")
    callback.on_multirun_end(cfg)


def test_a_slurm_sweep_on_a_local_sqlite_file_is_refused_up_front(tmp_path):
    cfg = sweep_cfg(tmp_path, tmp_path / "multirun" / "s1")
    with open_dict(cfg):
        cfg.hydra.launcher = {"_target_": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"}
    with pytest.raises(SweepError, match="make server"):
        MlflowSweepCallback().on_multirun_start(cfg)
    assert not (tmp_path / "store").exists()  # refused before anything was created


def test_the_store_is_in_wal_mode_new_or_existing(tmp_path):
    db = tmp_path / "store" / "mlflow.db"
    prepare_sqlite_store(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("PRAGMA journal_mode=DELETE")  # a store made before WAL mode
    conn.close()
    prepare_sqlite_store(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_retry_locked_waits_out_a_real_lock(tmp_path):
    """Another connection holds the write lock for a second; the write is retried until it gets through."""
    db = tmp_path / "x.db"
    with sqlite3.connect(db) as setup:
        setup.execute("CREATE TABLE t (v INTEGER)")
    setup.close()
    holder = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    release.start()
    writer = sqlite3.connect(db, timeout=0, isolation_level=None)  # no busy wait of its own: fails at once
    with pytest.raises(sqlite3.OperationalError) as first:
        writer.execute("INSERT INTO t VALUES (1)")
    assert is_locked(first.value)
    started = time.monotonic()
    retry_locked(writer.execute, "INSERT INTO t VALUES (2)")
    assert time.monotonic() - started > 0.3  # it waited for the holder
    assert writer.execute("SELECT v FROM t").fetchall() == [(2,)]
    release.join()
    holder.close()
    writer.close()


def test_retry_locked_does_not_retry_other_errors():
    calls = []

    def broken():
        calls.append(1)
        raise sqlite3.OperationalError("no such table: runs")

    with pytest.raises(sqlite3.OperationalError):
        retry_locked(broken)
    assert calls == [1]


def test_the_sqlite_client_retries_and_a_server_client_is_mlflows_own(tmp_path):
    cfg = make_cfg(tmp_path)
    experiment_id = ensure_store(cfg.tracking)
    client = tracking_client(cfg.tracking.uri)
    assert not isinstance(client, MlflowClient)  # the retrying wrapper
    assert client.get_experiment(experiment_id).name == "exp" and client.tracking_uri == cfg.tracking.uri
    assert isinstance(tracking_client("http://127.0.0.1:5000"), MlflowClient)
