"""Suite modules with their asserts rewritten, cached across runs as pytest itself caches them.

pytest rewrites the asserts of every test module it imports (about 5 ms of CPU for a HumanEval
suite, more than the rest of a child's collection) and keeps the result in a `__pycache__` beside the
file, as a checked-hash pyc (PEP 552) that it uses only if the file's source hash matches. A sandboxed
child cannot keep that cache: its job directory is read-only to it and wiped after every job. So the
worker keeps it, outside the sandbox: before a job runs, each suite file gets its pyc in the job's
`__pycache__` (root-owned, read-only), taken from `<user cache>/runner/pytest-rewrite/<pytest tag>/`
under the SHA-256 of the file, or rewritten here with the prepared session's own config and stored
there first. The child's pytest checks the source hash itself before it uses a pyc.

A speed-up through pytest internals (`_rewrite_test`, `_write_pyc_fp`, the pyc's name): used only with
the prepared session on the pinned pytest series, `rewrite_cache` in runner.sandbox.speedups.internals.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import tempfile
from pathlib import Path


def default_root() -> Path:
    """`$XDG_CACHE_HOME/runner/pytest-rewrite` (default `~/.cache/...`), one folder per pytest and Python."""
    from _pytest.assertion.rewrite import PYTEST_TAG

    from runner.caches.user_dir import user_cache_dir

    return user_cache_dir("pytest-rewrite", PYTEST_TAG)


class RewriteCache:
    """Puts each suite file's rewritten pyc where the child's pytest looks for it."""

    def __init__(self, config, root: Path | None = None) -> None:
        self.config = config  # the prepared session's: rewriting depends on its ini options
        self.root = root or default_root()

    def provide(self, test_dir: str, names: list[str]) -> None:
        """Write `test_dir/__pycache__/<name>.<tag>.pyc` for each suite file `name` of the job."""
        from _pytest.assertion.rewrite import PYC_TAIL

        pycache = os.path.join(test_dir, "__pycache__")
        os.makedirs(pycache, mode=0o755, exist_ok=True)
        for name in names:
            target = os.path.join(pycache, name[:-3] + PYC_TAIL)
            with open(target, "wb") as handle:
                handle.write(self._pyc(Path(test_dir, name)))
            os.chmod(target, 0o444)

    def _pyc(self, path: Path) -> bytes:
        cached = self.root / f"{hashlib.sha256(path.read_bytes()).hexdigest()}.pyc"
        try:
            return cached.read_bytes()
        except OSError:
            pass
        from _pytest.assertion.rewrite import _rewrite_test, _write_pyc_fp

        source_hash, code = _rewrite_test(path, self.config)
        buffer = io.BytesIO()
        _write_pyc_fp(buffer, source_hash, code)
        data = buffer.getvalue()
        _store(cached, data)
        return data


def _store(path: Path, data: bytes) -> None:
    """Write atomically (workers of several runs share the folder); a folder that cannot be written is skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp)
