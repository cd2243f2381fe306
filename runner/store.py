"""A local MLflow SQLite store that is either absent or whole, never half-migrated.

MLflow migrates a fresh database in place, in many steps; a kill or a second process in those seconds
leaves a database no job can use again. `prepare_sqlite_store` instead migrates a temporary file next
to the database and renames it into place when complete, all under an exclusive `fcntl.flock` on
`<db>.lock`, so concurrent first jobs wait for one creator and a kill leaves no store at all. A store
whose schema is not MLflow's current one is reported in one line before any work starts.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


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
    db.parent.mkdir(parents=True, exist_ok=True)
    with open(db.with_name(db.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the process dies
        revision, tables = _schema(db)
        expected = _head_revision()
        if tables and revision == expected:
            return
        if tables:
            raise StoreError(
                f"{db} is half-migrated or from another MLflow version (alembic revision {revision or 'none'}, "
                f"expected {expected}): move it away or delete it, and the next job creates a new store"
            )
        _create(db)


def _schema(db: Path) -> tuple[str | None, int]:
    """(alembic revision or None, number of tables) of an SQLite file; (None, 0) when it does not exist."""
    import sqlite3

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


def _create(db: Path) -> None:
    """Migrate a new database in a temporary file beside `db`, then rename it into place (the lock is held)."""
    import sqlalchemy
    from mlflow.store.db.utils import _initialize_tables

    for stale in db.parent.glob(f".{db.name}.*.creating*"):  # left by a creator that was killed
        stale.unlink()
    tmp = db.with_name(f".{db.name}.{os.getpid()}.creating")
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp}")
    try:
        _initialize_tables(engine)
    finally:
        engine.dispose()
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, db)
    directory = os.open(db.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
