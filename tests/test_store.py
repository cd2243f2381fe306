"""New SQLite stores start as copies of one migrated empty store kept in the user cache (real MLflow)."""

from __future__ import annotations

import sqlite3

import pytest
from mlflow.tracking import MlflowClient

from runner.tracking.local_store import StoreError, prepare_sqlite_store


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "runner" / "mlflow-store"


def _revision(db) -> str:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        revision = conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    conn.close()
    return revision


def test_the_first_store_makes_the_template_and_later_stores_copy_it(tmp_path, user_cache):
    first = tmp_path / "a" / "mlflow.db"
    prepare_sqlite_store(first)
    [template] = user_cache.glob("*.db")
    assert template.stem == _revision(first)  # named after the schema revision it holds
    made = template.stat().st_mtime_ns

    second = tmp_path / "b" / "mlflow.db"
    prepare_sqlite_store(second)
    assert template.stat().st_mtime_ns == made  # reused, not migrated again
    assert _revision(second) == template.stem
    client = MlflowClient(tracking_uri=f"sqlite:///{second}")
    experiment = client.create_experiment("x", artifact_location=str(tmp_path / "artifacts"))
    run = client.create_run(experiment)
    client.log_metric(run.info.run_id, "m", 1.0)
    client.set_terminated(run.info.run_id)
    assert client.get_run(run.info.run_id).data.metrics == {"m": 1.0}
    assert MlflowClient(tracking_uri=f"sqlite:///{first}").get_experiment_by_name("x") is None  # stores share nothing
    assert _revision(template) == template.stem  # using a copy left the template as it was


def test_a_damaged_template_is_made_again(tmp_path, user_cache):
    prepare_sqlite_store(tmp_path / "a" / "mlflow.db")
    [template] = user_cache.glob("*.db")
    template.write_bytes(b"not a database" * 100)
    db = tmp_path / "b" / "mlflow.db"
    prepare_sqlite_store(db)
    assert _revision(db) == _revision(template) == template.stem
    assert not list(user_cache.glob(".*creating*"))


def test_without_a_writable_user_cache_the_store_is_migrated_in_place(tmp_path, monkeypatch):
    blocker = tmp_path / "xdg"
    blocker.write_text("a file where the cache directory would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    db = tmp_path / "a" / "mlflow.db"
    prepare_sqlite_store(db)
    assert _revision(db)
    MlflowClient(tracking_uri=f"sqlite:///{db}").search_experiments()


def test_a_file_that_is_not_a_database_is_reported_in_one_line(tmp_path, user_cache):
    db = tmp_path / "a" / "mlflow.db"
    db.parent.mkdir()
    db.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match=r"mlflow.db is not an MLflow store \(.*\): move it away or delete it"):
        prepare_sqlite_store(db)
