"""The worker's one job directory, at a fixed path for its whole life, and the pytest session prepared for it."""

from __future__ import annotations

import os
import shutil
import tempfile

from runner.sandbox.child import pytest_child
from runner.sandbox.confine import isolation
from runner.sandbox.confine.limits import Limits
from runner.sandbox.speedups import direct_collection, internals
from runner.sandbox.speedups.rewrite_cache import RewriteCache


class JobPlace:
    """The worker's one job directory, at a fixed path for its whole life, and the session prepared for it.

    Layout: `root/pytest.ini`, `root/t/` (the job's files, read-only, root-owned when root) and
    `root/w/` (the child's working directory, owned by the sandbox uid). The paths never change,
    so the pytest session can be configured once (`pytest_child.prepare_session`); the contents
    are wiped before and after every job and the working directory before every suite.
    """

    def __init__(self, slot, limits: Limits) -> None:
        prefix = f"runner-slot{slot.index}-"
        _remove_stale(prefix)
        self.root = tempfile.mkdtemp(prefix=prefix, dir=isolation.JOB_DIR_BASE)
        os.chmod(self.root, 0o755)
        self.test_dir = os.path.join(self.root, "t")
        self.scratch = os.path.join(self.root, "w")
        self.ini_path = os.path.join(self.root, "pytest.ini")
        os.mkdir(self.test_dir, 0o755)
        write_readonly(self.ini_path, "[pytest]\n")
        self.fresh_scratch(slot, limits)
        self.prepared = None
        self.rewrites: RewriteCache | None = None
        if internals.enabled("prepared_session"):
            self.prepared = pytest_child.prepare_session(self.test_dir, self.ini_path, self.scratch, limits)
            if internals.enabled("rewrite_cache"):
                self.rewrites = RewriteCache(self.prepared.config)
            if internals.enabled("direct_collection"):
                direct_collection.install(self.prepared.session, self.test_dir)

    def clear(self) -> None:
        """Remove every job file and the working directory's contents."""
        for entry in os.scandir(self.test_dir):
            if entry.is_dir(follow_symlinks=False):  # __pycache__ (runner.sandbox.speedups.rewrite_cache)
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def fresh_scratch(self, slot, limits: Limits) -> None:
        """An empty working directory for the next child, owned by the sandbox uid."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        os.mkdir(self.scratch, 0o700)
        if limits.drop_privileges and isolation.is_root():
            os.chown(self.scratch, slot.uid, slot.gid)

    def remove(self) -> None:
        """Delete the whole directory (when the worker ends)."""
        shutil.rmtree(self.root, ignore_errors=True)


def _remove_stale(prefix: str) -> None:
    """Remove job directories a killed worker of this slot left (the slot lock says none is alive)."""
    base = isolation.JOB_DIR_BASE or tempfile.gettempdir()
    for entry in os.scandir(base):
        try:
            mine = entry.stat(follow_symlinks=False).st_uid == os.geteuid()
            if entry.name.startswith(prefix) and mine and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def write_readonly(path: str, content: str | bytes) -> None:
    """Write a file (text as UTF-8, or bytes) the sandboxed child may read but not change (mode 0444)."""
    with open(path, "wb") as handle:
        handle.write(content if isinstance(content, bytes) else content.encode("utf-8"))
    os.chmod(path, 0o444)
