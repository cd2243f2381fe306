"""A local MLflow SQLite store that is either absent or whole, never half-migrated.

MLflow migrates a fresh database in place, in many steps; a kill or a second process in those seconds
leaves a database no job can use again. `prepare_sqlite_store` instead builds the store in a temporary
file next to the database and renames it into place when complete, all under an exclusive `fcntl.flock`
on `<db>.lock`, so concurrent first jobs wait for one creator and a kill leaves no store at all. A store
whose schema is not MLflow's current one is reported in one line before any work starts.

Migrating takes about 2 s of CPU, the same for every new store, so it is done once per schema revision:
the empty migrated database is kept in the user cache (`<user cache>/mlflow-store/<revision>.db`, made
the same atomic way) and the temporary file of each new store is a copy of it.

Parallel jobs (`hydra/launcher=joblib`) write to one store at once: the store is kept in WAL mode (readers
never block the writer), and `tracking_client` gives a client whose calls wait out SQLite's
`database is locked` (retried with backoff for up to LOCKED_RETRY_S), so every job's run arrives.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import random
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

LOCKED_RETRY_S = 300.0
"""How long one call to a SQLite store is retried while the database is locked by other jobs."""


class StoreError(RuntimeError):
    """The tracking store cannot be used; the one-line message says what to do."""


def sqlite_path(uri: str) -> Path | None:
    """The database file of a `sqlite:///` tracking URI, or None for any other store."""
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


def prepare_sqlite_store(db: Path) -> None:
    """Make `db` a whole MLflow store at the current schema: keep it, create it atomically, or raise.

    Raises StoreError when `db` holds tables at another schema revision (half-migrated by a killed or
    raced creation, or made by another MLflow version).
    """
    with _locked(db):
        try:
            revision, tables = _schema(db)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{db} is not an MLflow store ({exc}): move it away or delete it") from None
        expected = _head_revision()
        if tables and revision == expected:
            _use_wal(db)
            return
        if tables:
            raise StoreError(
                f"{db} is half-migrated or from another MLflow version (alembic revision {revision or 'none'}, "
                f"expected {expected}): move it away or delete it, and the next job creates a new store"
            )
        _create(db, expected)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive `fcntl.flock` on `<path>.lock` (its folder created if missing).

    The lock is released when the file closes, also when the process dies.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _schema(db: Path) -> tuple[str | None, int]:
    """(alembic revision or None, number of tables) of an SQLite file; (None, 0) when it does not exist."""
    if not db.is_file() or db.stat().st_size == 0:
        return None, 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        revision = None
        if "alembic_version" in tables:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
    conn.close()
    return revision, len(tables)


def _head_revision() -> str:
    from mlflow.store.db.utils import _get_latest_schema_revision

    return _get_latest_schema_revision()


def _create(db: Path, revision: str) -> None:
    """Copy the empty store at `revision` beside `db`, then rename it into place (the lock is held)."""
    tmp = _fresh_temporary(db)
    try:
        template = _template(revision)
    except OSError:  # the user cache cannot be written: migrate this store itself
        _migrate(tmp)
    else:
        shutil.copyfile(template, tmp)
    _use_wal(tmp)
    _install(tmp, db)


def _template(revision: str) -> Path:
    """The empty MLflow database migrated to `revision`, in the user cache; migrated now if missing or not whole."""
    from runner.caches.user_dir import user_cache_dir

    template = user_cache_dir("mlflow-store", f"{revision}.db")
    with _locked(template):
        try:
            found, tables = _schema(template)
        except sqlite3.DatabaseError:  # damaged: made again
            found, tables = None, 0
        if found != revision or not tables:
            tmp = _fresh_temporary(template)
            _migrate(tmp)
            _install(tmp, template)
    return template


def _fresh_temporary(target: Path) -> Path:
    """A temporary path beside `target`, after deleting any a killed creator left there."""
    for stale in target.parent.glob(f".{target.name}.*.creating*"):
        stale.unlink()
    return target.with_name(f".{target.name}.{os.getpid()}.creating")


def _migrate(path: Path) -> None:
    """Create MLflow's tables in a new database at `path`, migrated to the current schema.

    Quietly: MLflow's and alembic's INFO lines about it ("Creating initial MLflow database tables...")
    are not for the user, whose job says in one line that it creates the store (runner.job.run)."""
    import sqlalchemy
    from mlflow.store.db.utils import _initialize_tables

    engine = sqlalchemy.create_engine(f"sqlite:///{path}")
    loggers = [logging.getLogger(name) for name in ("mlflow.store.db.utils", "alembic")]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.WARNING)
        _initialize_tables(engine)
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        engine.dispose()


def _install(tmp: Path, target: Path) -> None:
    """Rename the complete file `tmp` to `target`, durably (both the file and the directory entry synced)."""
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, target)
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _use_wal(db: Path) -> None:
    """Put the database in WAL mode (a setting kept in the file), so readers do not block the writer."""
    conn = sqlite3.connect(db, timeout=60)
    try:
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            retry_locked(conn.execute, "PRAGMA journal_mode=WAL")
    finally:
        conn.close()


def is_locked(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it was raised from) is SQLite's `database is locked`."""
    seen: BaseException | None = exc
    while seen is not None:
        if "database is locked" in str(seen) or "database table is locked" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def retry_locked(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`call(*args, **kwargs)`, retried with jittered backoff while SQLite says the database is locked.

    Safe to retry: a statement that failed on the lock rolled its transaction back, so nothing was written.
    """
    deadline = time.monotonic() + LOCKED_RETRY_S
    delay = 0.05
    while True:
        try:
            return call(*args, **kwargs)
        except Exception as exc:
            if not is_locked(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay * random.uniform(1.0, 2.0))
        delay = min(delay * 2, 2.0)


class _LockRetryingClient:
    """An MlflowClient whose every method call goes through `retry_locked`."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr
        return functools.wraps(attr)(functools.partial(retry_locked, attr))


def tracking_client(uri: str) -> Any:
    """An MlflowClient for `uri`; for a local SQLite store, one that waits out `database is locked`."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    return _LockRetryingClient(client) if sqlite_path(uri) is not None else client
