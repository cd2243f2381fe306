"""Sweeps through Hydra's launchers: wall time of basic vs joblib, and the run trees on a server and on Ray.

    uv run --extra cluster python bench/bench_launchers.py [wall] [server] [ray] [hydra overrides for wall ...]

(default: all three parts). Overrides (key=value) go to the `wall` sweeps, e.g. `sampling.num_predict=128
repair=none` for a shorter run on a busy machine.

wall    a 4-job sweep (seed=1,2,3,4) of task_set=seed10 on the embedded model (llamacpp, SmolLM2-135M), once
        with Hydra's basic launcher (one job after the other) and once with the joblib launcher (four at
        once), each from a cold cache; prints the sweep's wall time and, per job, its wall time and what
        generation and tests cost it (sums over its attempts, from attempts.jsonl), with the load average.
server  `python -m runner.server` (PostgreSQL + mlflow server) and a 4-job joblib sweep of fast jobs (a
        loopback OpenAI-compatible model); prints the tree of runs as MlflowClient lists it.
ray     a local Ray cluster (`ray start --head`) and a 2-job sweep through the Ray launcher; prints the
        parent run and each job's run with the host, Ray node and process it ran in.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from load_average import load_average  # noqa: E402  (this script's folder is on sys.path)

from runner.records import read_attempts  # noqa: E402
from runner.tracking.runs import PARENT_ENV, SWEEP_ENV  # noqa: E402
from tests.cluster_servers import RayHead, TrackingServer  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402


def run_sweep(tmp: Path, overrides: list[str], env: dict | None = None) -> float:
    """Run `python -m runner -m` with `overrides` (sweep folder tmp/sweep); its wall time in seconds."""
    clean = {k: v for k, v in os.environ.items() if k not in (PARENT_ENV, SWEEP_ENV)}
    command = [sys.executable, "-m", "runner", "-m", f"cache_dir={tmp}/cache", f"hydra.sweep.dir={tmp}/sweep",
               "progress=false", *overrides]  # fmt: skip
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env={**clean, **(env or {})}, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 2):
        raise SystemExit(f"sweep failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall


def job_rows(sweep_dir: Path, uri: str) -> list[dict]:
    """Per job: its run's wall time (opened at the job's start, ended after its results were logged),
    and the sums over its attempts of generation and test seconds and completion tokens."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("runner")
    walls = {
        Path(r.data.tags.get("runner.out_dir", "")).name: (r.info.end_time - r.info.start_time) / 1000
        for r in client.search_runs([experiment.experiment_id])
        if r.info.end_time
    }
    rows = []
    for job in sorted(p for p in sweep_dir.iterdir() if (p / "attempts.jsonl").is_file()):
        records = read_attempts(job / "attempts.jsonl")
        rows.append({
            "job": job.name,
            "attempts": len(records),
            "generation_s": sum(r.generation_s for r in records),
            "test_s": sum(r.test_s for r in records),
            "tokens": sum(r.completion_tokens for r in records),
            "job_wall_s": walls.get(job.name, float("nan")),
        })  # fmt: skip
    return rows


def bench_wall(extra: list[str]) -> None:
    print(f"== wall: 4-job sweep of task_set=seed10 on the embedded model {' '.join(extra)} "
          f"(load average before: {load_average()})")  # fmt: skip
    sweeps = {"basic": [], "joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=4"]}
    results = {}
    for name, launcher in sweeps.items():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            overrides = ["seed=1,2,3,4", "task_set=seed10", f"tracking.uri=sqlite:///{tmp}/mlflow.db",
                         f"tracking.artifact_root={tmp}/artifacts", *extra, *launcher]  # fmt: skip
            wall = run_sweep(tmp, overrides)
            results[name] = (wall, job_rows(tmp / "sweep", f"sqlite:///{tmp}/mlflow.db"), load_average())
    for name, (wall, rows, load) in results.items():
        print(f"\n{name} launcher: sweep wall {wall:.1f} s (load average after: {load})")
        print(f"  {'job':<22} {'job wall s':>10} {'gen s':>8} {'test s':>7} {'tokens':>7} {'tok/s':>6} {'attempts':>8}")
        for r in rows:
            rate = r["tokens"] / r["generation_s"] if r["generation_s"] else 0.0
            print(f"  {r['job']:<22} {r['job_wall_s']:>10.1f} {r['generation_s']:>8.1f} {r['test_s']:>7.2f} "
                  f"{r['tokens']:>7} {rate:>6.1f} {r['attempts']:>8}")  # fmt: skip
    if len(results) == 2:
        basic, joblib = results["basic"], results["joblib"]
        gen = [sum(r["generation_s"] for r in rows) / max(1, len(rows)) for _, rows, _ in (basic, joblib)]
        ratio = gen[1] / max(gen[0], 1e-9)
        print(f"\nspeed-up of the sweep: {basic[0] / joblib[0]:.2f}x; mean generation time per job: "
              f"{gen[0]:.1f} s basic, {gen[1]:.1f} s joblib ({ratio:.2f}x: the jobs share 2 cores)")  # fmt: skip


def print_tree(client, experiment_name: str = "runner", extra_tags: tuple[str, ...] = ()) -> None:
    """The experiment's runs as MlflowClient lists them: each sweep parent, then its children."""
    experiment = client.get_experiment_by_name(experiment_name)
    runs = client.search_runs([experiment.experiment_id], order_by=["attributes.start_time ASC"])
    for parent in (r for r in runs if r.data.tags.get("runner.role") == "sweep"):
        tags = parent.data.tags
        print(f"parent {parent.info.run_id} {parent.info.status} {parent.info.run_name!r} "
              f"sweep_id={tags.get('runner.sweep_id')} host={tags.get('runner.host')} pid={tags.get('runner.pid')} "
              f"artifacts={[a.path for a in client.list_artifacts(parent.info.run_id)]}")  # fmt: skip
        for child in (r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id):
            t = child.data.tags
            where = " ".join(
                f"{k.removeprefix('runner.')}={t.get(k)}" for k in ("runner.host", "runner.pid", *extra_tags)
            )
            artifacts = len(client.list_artifacts(child.info.run_id))
            seed = child.data.params.get("seed")
            print(f"  child {child.info.run_id} {child.info.status} {child.info.run_name!r} seed={seed} "
                  f"metrics={len(child.data.metrics)} top-level artifacts={artifacts} {where}")  # fmt: skip


def fast_job_overrides(model: FakeOpenAI) -> list[str]:
    return ["backend=openai", f"backend.base_url={model.url}/v1", "model.id=fake", "task_set.limit=2",
            "gold.enabled=false", "sandbox.workers=1"]  # fmt: skip


def bench_server() -> None:
    from mlflow.tracking import MlflowClient

    print(f"\n== server: PostgreSQL + mlflow server, 4-job joblib sweep (load average: {load_average()})")
    model = FakeOpenAI(models=("fake",)).start()
    try:
        with tempfile.TemporaryDirectory() as tmp, TrackingServer(Path(tmp) / "server") as server:
            tmp = Path(tmp)
            overrides = ["seed=1,2,3,4", "hydra/launcher=joblib", "hydra.launcher.n_jobs=4", "tracking=server",
                         f"tracking.uri={server.url}"]  # fmt: skip
            wall = run_sweep(tmp, [*fast_job_overrides(model), *overrides])
            print(
                f"sweep wall {wall:.1f} s; tracking.uri={server.url}; store: PostgreSQL in {server.root / 'postgres'}"
            )
            print_tree(MlflowClient(tracking_uri=server.url))
    finally:
        model.stop()


def bench_ray() -> None:
    from mlflow.tracking import MlflowClient

    print(f"\n== ray: local Ray cluster, 2-job sweep through the Ray launcher (load average: {load_average()})")
    model = FakeOpenAI(models=("fake",)).start()
    try:
        with tempfile.TemporaryDirectory() as tmp, RayHead() as head:
            tmp = Path(tmp)
            uri = f"sqlite:///{tmp}/mlflow.db"
            wall = run_sweep(tmp, [*fast_job_overrides(model), "seed=1,2", "hydra/launcher=ray_cluster",
                                   f"hydra.launcher.ray.init.address={head.address}", f"tracking.uri={uri}",
                                   f"tracking.artifact_root={tmp}/artifacts"], env=head.env)  # fmt: skip
            print(f"sweep wall {wall:.1f} s; Ray head {head.address}; cluster nodes: {sorted(head.node_ids())}")
            print_tree(MlflowClient(tracking_uri=uri), extra_tags=("runner.ray_node_id",))
    finally:
        model.stop()


if __name__ == "__main__":
    parts = {"wall": bench_wall, "server": bench_server, "ray": bench_ray}
    chosen = [a for a in sys.argv[1:] if a in parts] or list(parts)
    overrides = [a for a in sys.argv[1:] if a not in parts]
    for part in chosen:
        parts[part](overrides) if part == "wall" else parts[part]()
