"""A task environment: the task's pinned requirements and the harness's pytest, in a venv made by uv.

Environments are cached by the hash of what goes in (interpreter, its version, pytest's version, the
sorted requirements) under `repo.env_dir` (default `<cache_dir>/repo_envs`), built in a temporary
directory and renamed into place, so a killed build leaves nothing half-made; one build per key at a
time (a lock file), shared by the gold check and every candidate.

The sandboxed child runs as an unprivileged uid, which must be able to run the interpreter and read
the venv. The harness's own Python often cannot be used for that (pyenv under /root, mode 700): the
interpreter is the configured `repo.python`, else the harness's if the sandbox uid can run it, else a
system Python of the same version (`/usr/bin/python3.X`). Each is probed by actually running it as
`nobody`; a venv that uid cannot read (an env_dir under /root) is refused with what to change.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PROBE_UID = 65534
"""`nobody`: the probe runs as a uid with no more rights than a sandbox slot's (never a slot's own uid,
whose processes a worker kills)."""
ENV_MARK = "runner-env.json"
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class EnvError(RuntimeError):
    """An environment could not be made or used; the message says what to change."""


@dataclass(frozen=True)
class TaskEnv:
    """A ready environment: its interpreter (`python`), its key, and whether this call built it."""

    python: str
    key: str
    path: str
    built: bool
    seconds: float


def harness_pytest() -> str:
    """The pytest version the harness itself is locked to (every environment gets the same)."""
    return importlib.metadata.version("pytest")


def _uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def _as_sandbox_user() -> dict:
    return {"user": PROBE_UID, "group": PROBE_UID, "extra_groups": []} if os.geteuid() == 0 else {}


def runs_unprivileged(python: str, code: str = "import encodings, json") -> bool:
    """Whether the sandbox's kind of uid can run `python -c code` (as `nobody` when we are root)."""
    try:
        done = subprocess.run([python, "-I", "-c", code], capture_output=True, timeout=60, cwd="/",
                              env={"PATH": "/usr/bin:/bin"}, **_as_sandbox_user())  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def find_python(configured: str = "") -> str:
    """The interpreter environments are made from: `configured`, else the first usable candidate."""
    if configured:
        if not runs_unprivileged(configured):
            raise EnvError(f"repo.python={configured} cannot be run by an unprivileged uid; choose a Python "
                           "installed where every user may run it (e.g. /usr/bin/python3)")  # fmt: skip
        return configured
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [getattr(sys, "_base_executable", sys.executable), f"/usr/bin/python{version}",
                  f"/usr/local/bin/python{version}", shutil.which(f"python{version}") or ""]  # fmt: skip
    for candidate in dict.fromkeys(c for c in candidates if c):
        if os.path.exists(candidate) and runs_unprivileged(candidate):
            return candidate
    raise EnvError(f"no Python {version} that an unprivileged uid may run (tried {', '.join(candidates)}); "
                   "install one (apt-get install python3) or set repo.python=PATH")  # fmt: skip


def _version_of(python: str) -> str:
    out = subprocess.run([python, "-I", "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                         text=True, timeout=60, check=True)  # fmt: skip
    return out.stdout.strip()


def environments(cfg) -> Environments:
    """The environments a `runner.config.Config` names (`repo.env_dir`, default `<cache_dir>/repo_envs`)."""
    return Environments(cfg.repo.env_dir or Path(cfg.cache_dir) / "repo_envs", cfg.repo.python)


class Environments:
    """Make (once) and hand out the environment of each requirements list; thread-safe."""

    def __init__(self, env_dir: str | Path, python: str = "") -> None:
        self.env_dir = Path(env_dir).absolute()
        self._configured = python
        self._python: str | None = None
        self._version = ""

    @property
    def python(self) -> str:
        """The base interpreter (found on first use)."""
        if self._python is None:
            self._python = find_python(self._configured)
            self._version = _version_of(self._python)
        return self._python

    def key(self, requirements: tuple[str, ...]) -> str:
        """The cache key of an environment: interpreter, its version, pytest's version, the requirements."""
        python = self.python
        payload = {"python": os.path.realpath(python), "version": self._version, "pytest": harness_pytest(),
                   "requirements": sorted(r.strip().lower() for r in requirements)}  # fmt: skip
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]

    def ensure(self, requirements: tuple[str, ...]) -> TaskEnv:
        """The environment for `requirements`, built now if it does not exist yet (raises EnvError)."""
        start = time.monotonic()
        key = self.key(requirements)
        path = self.env_dir / key
        with _locks_guard:
            lock = _locks.setdefault(str(path), threading.Lock())
        with lock:
            built = False
            if not (path / ENV_MARK).is_file():
                self._make_dir()
                with open(self.env_dir / f"{key}.lock", "w") as handle:
                    fcntl.flock(handle, fcntl.LOCK_EX)  # another process may be building the same one
                    if not (path / ENV_MARK).is_file():
                        self._build(path, requirements)
                        built = True
        python = str(path / "bin" / "python")
        return TaskEnv(python, key, str(path), built, time.monotonic() - start)

    def _make_dir(self) -> None:
        self.env_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.env_dir, 0o755)

    def _build(self, path: Path, requirements: tuple[str, ...]) -> None:
        shutil.rmtree(path, ignore_errors=True)  # a leftover without its mark is incomplete
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{path.name}-", dir=self.env_dir))
        try:
            os.chmod(tmp, 0o755)
            self._uv_run(["venv", "--quiet", "--no-project", "--python", self.python, str(tmp)], "create the venv")
            pins = [f"pytest=={harness_pytest()}", *requirements]
            self._uv_run(["pip", "install", "--quiet", "--link-mode", "copy", "--python", str(tmp / "bin" / "python"),
                          *pins], "install " + " ".join(pins))  # fmt: skip
            if not runs_unprivileged(str(tmp / "bin" / "python"), "import pytest"):
                raise EnvError(f"an unprivileged uid cannot use the environment in {self.env_dir}; set repo.env_dir "
                               "to a directory every user may read (e.g. /var/tmp/runner-envs)")  # fmt: skip
            mark = {"python": self.python, "version": self._version, "pytest": harness_pytest(),
                    "requirements": list(requirements)}  # fmt: skip
            (tmp / ENV_MARK).write_text(json.dumps(mark, indent=2) + "\n")
            os.rename(tmp, path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _uv_run(self, args: list[str], what: str) -> None:
        try:
            done = subprocess.run([*_uv(), *args], capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EnvError(f"uv could not {what}: {exc}") from None
        if done.returncode != 0:
            lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
            said = " | ".join(lines[-3:]) or f"exit code {done.returncode}"
            raise EnvError(f"uv could not {what}: {said}")
