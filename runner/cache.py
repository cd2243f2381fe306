"""A content-addressed cache of generations and verdicts, so a killed job resumes where it stopped.

A key is the SHA-256 of everything that determines the cached value; values are JSON files written
atomically (temp file + rename), so a crash never leaves a torn entry behind. Keys of verdicts hold
`runner.fingerprint.harness_fingerprint()`, so a changed harness never reuses an old verdict.
"""

from __future__ import annotations

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
        """The cached value, or None."""
        path = self._path(namespace, key)
        try:
            value = json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            self.misses += 1
            return None
        self.hits += 1
        self.hits_by_namespace[namespace] = self.hits_by_namespace.get(namespace, 0) + 1
        return value

    def put(self, namespace: str, key: str, value: Any) -> None:
        """Store a value atomically."""
        path = self._path(namespace, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            json.dump(value, handle, sort_keys=True, ensure_ascii=False)
        os.replace(tmp, path)
