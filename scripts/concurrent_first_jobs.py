"""Three jobs started at once on a fresh MLflow store, N times: how many runs, how many failures.

    python scripts/concurrent_first_jobs.py [rounds=10] [jobs=3]

Each round makes a new empty directory, starts `jobs` real `python -m runner` jobs at the same moment
(one task each, against a loopback OpenAI-compatible server started here), waits for them, and counts
the FINISHED runs in that round's `sqlite:///.../mlflow.db` and the jobs that failed (a non-zero exit,
or a run that is missing or not FINISHED). Prints one line per round and the totals.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAI  # noqa: E402  (the loopback server the tests use)

MODEL = "qwen2.5-coder-7b"


def command(tmp: Path, server: FakeOpenAI, job: int) -> list[str]:
    return [
        sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1", f"model.id={MODEL}",
        "model.name=fake", "task_set.limit=1", "sandbox.workers=1", f"seed={job}", "progress=false",
        f"tracking.uri=sqlite:///{tmp}/mlruns/mlflow.db", f"tracking.artifact_root={tmp}/mlruns/artifacts",
        f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/job{job}",
    ]  # fmt: skip


def finished_runs(tmp: Path) -> int:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp}/mlruns/mlflow.db")
    experiment = client.get_experiment_by_name("runner")
    if experiment is None:
        return 0
    return sum(r.info.status == "FINISHED" for r in client.search_runs([experiment.experiment_id]))


def one_round(server: FakeOpenAI, jobs: int) -> tuple[int, int, float, list[str]]:
    """(FINISHED runs, failed jobs, seconds, error tails) of one round on a fresh store."""
    with tempfile.TemporaryDirectory(prefix="runner-store-") as name:
        tmp = Path(name)
        started = time.monotonic()
        procs = [
            subprocess.Popen(
                command(tmp, server, job), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )  # fmt: skip
            for job in range(jobs)
        ]
        errors = [p.communicate()[1] for p in procs]
        seconds = time.monotonic() - started
        failed_exits = [err[-400:] for p, err in zip(procs, errors, strict=True) if p.returncode != 0]
        runs = finished_runs(tmp)
    return runs, max(len(failed_exits), jobs - runs), seconds, failed_exits


def main(argv: list[str]) -> int:
    options = dict(arg.split("=", 1) for arg in argv)
    rounds, jobs = int(options.get("rounds", 10)), int(options.get("jobs", 3))
    server = FakeOpenAI(models=(MODEL,)).start()
    total_runs = total_failures = 0
    try:
        for number in range(1, rounds + 1):
            runs, failures, seconds, errors = one_round(server, jobs)
            total_runs += runs
            total_failures += failures
            print(f"round {number}: {runs} FINISHED runs, {failures} failures ({seconds:.1f} s)", flush=True)
            for err in errors:
                print("  " + err.strip().replace("\n", "\n  "))
    finally:
        server.stop()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(
        f"{jobs} jobs at once on a fresh store, {rounds} times: {total_runs} runs, {total_failures} failures"
        + (f" (load average {' '.join(load)})" if load else "")
    )
    return 1 if total_failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
