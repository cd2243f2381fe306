"""A content-addressed cache of generations and verdicts, so a killed job resumes where it stopped.

A key is the SHA-256 of everything that determines the cached value; values are JSON files. Keys of
verdicts hold `runner.caches.fingerprint.harness_fingerprint()`, so a changed harness never reuses an old verdict.

The cache may live on a filesystem shared by many jobs at once (NFS, a cluster's scratch space):
- an entry is written to a temp file in its own directory, fsynced, then put in place in one step, so a
  reader sees the whole entry or none, and a crash never leaves a torn entry behind;
- the first writer of a key wins (a hard link, which fails when the name exists): a job that computed
  the same key at the same time takes the entry already there, so every job ends with the same value;
- an entry that cannot be read back (torn by a foreign writer, corrupt) is a miss, and the next `put`
  replaces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def content_key(*parts: Any) -> str:
    """Stable hash of JSON-able parts."""
    blob = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _synced_temp(path: Path, data: bytes) -> Path:
    """`data` in a new, fsynced temp file beside `path` (same directory, so the rename stays atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(tmp)


def write_atomic(path: str | Path, data: bytes) -> None:
    """Replace `path` with `data` in one step (temp file, fsync, os.replace): the last writer wins."""
    tmp = _synced_temp(Path(path), data)
    try:
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_once(path: str | Path, data: bytes) -> bool:
    """Create `path` holding `data` in one step unless it exists: True if this call created it.

    The complete temp file is hard-linked to the name, which fails when another writer got there first.
    A filesystem without hard links falls back to `os.replace` (atomic, but the last writer wins).
    """
    path = Path(path)
    tmp = _synced_temp(path, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        # NFS may report EEXIST for a link that did succeed (a retried request): then it is our file.
        with contextlib.suppress(OSError):
            return os.path.samefile(tmp, path)
        return False
    except OSError:
        os.replace(tmp, path)
        return True
    finally:
        tmp.unlink(missing_ok=True)
    return True


class Cache:
    """JSON values under `root/<namespace>/<key[:2]>/<key>.json`."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        self.hits_by_namespace: dict[str, int] = {}

    def _path(self, namespace: str, key: str) -> Path:
        return self.root / namespace / key[:2] / f"{key}.json"

    def get(self, namespace: str, key: str) -> Any | None:
        """The cached value, or None (also for an entry that is unreadable: torn or corrupt)."""
        value = _read(self._path(namespace, key))
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self.hits_by_namespace[namespace] = self.hits_by_namespace.get(namespace, 0) + 1
        return value

    def put(self, namespace: str, key: str, value: Any) -> Any:
        """Store `value` unless another writer stored the key first; returns the value the cache holds.

        Callers go on with the returned value, so jobs that computed one key at once agree on it.
        """
        path = self._path(namespace, key)
        data = json.dumps(value, sort_keys=True, ensure_ascii=False).encode()
        if write_once(path, data):
            return json.loads(data)
        stored = _read(path)
        if stored is not None:
            return stored
        write_atomic(path, data)  # the entry there is unreadable: replace it
        stored = _read(path)
        return stored if stored is not None else json.loads(data)


def _read(path: Path) -> Any | None:
    """The JSON value in `path`, or None when it is missing, empty or not whole JSON."""
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):  # ValueError: JSONDecodeError and UnicodeDecodeError
        return None
    return value
