"""Tests for runner.tracking.runs and runner.tracking.sweep_callback against a real MLflow SQLite store in tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient
from omegaconf import OmegaConf, open_dict

from runner.config import Config, ModelConfig, PromptsConfig, SamplingConfig, ScoringConfig, TrackingConfig
from runner.records import AttemptRecord
from runner.results.scoring import summarize, task_table
from runner.tracking.runs import PARENT_ENV, PARENT_FILE, JobRun, ensure_store, flatten_config, log_job, process_tags
from runner.tracking.sweep_callback import MlflowSweepCallback


def rec(task, outcome, attempt=0, final=True, **kw) -> AttemptRecord:
    return AttemptRecord(
        task_id=task, sample=0, attempt=attempt, seed=7, model="tiny", messages=[{"role": "user", "content": "x"}],
        options={"temperature": 0.0}, response=f"```python\ndef f(): return {attempt}\n```",
        code=f"def f(): return {attempt}\n", outcome=outcome, final=final, **kw,
    )  # fmt: skip


RECORDS = [
    rec("HumanEval/0", "failed", final=False, suites={"visible": False},
        tests={"visible": [{"name": "test_a", "status": "failed", "message": "assert 1 == 2"}]}),
    rec("HumanEval/0", "passed", attempt=1, suites={"visible": True, "hidden": True}),
    rec("t2", "policy_rejected", rule="import os", line=1),
]  # fmt: skip


def make_cfg(tmp_path, model="tiny", seed=7, enabled=True) -> Config:
    return Config(
        model=ModelConfig(name=model, id="x.gguf"),
        seed=seed,
        sampling=SamplingConfig(temperature=0.0, stop=["```"]),
        prompts=PromptsConfig(system="s" * 7000),  # longer than MLflow's param limit: truncated, not fatal
        tracking=TrackingConfig(
            enabled, f"sqlite:///{tmp_path}/store/mlflow.db", "exp", str(tmp_path / "store" / "artifacts")
        ),
        scoring=ScoringConfig(bootstrap_resamples=100),
    )


def sweep_cfg(tmp_path, sweep_dir):
    """The config a Hydra sweep callback gets: a DictConfig with the `hydra` node."""
    cfg = OmegaConf.structured(make_cfg(tmp_path))
    with open_dict(cfg):
        cfg.hydra = {"sweep": {"dir": str(sweep_dir)}, "overrides": {"task": ["model=tiny", "seed=1,2"], "hydra": []}}
    return cfg


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv(PARENT_ENV, raising=False)


def test_flatten_config_dotted(tmp_path):
    flat = flatten_config(make_cfg(tmp_path))
    assert flat["model.name"] == "tiny" and flat["seed"] == "7"
    assert flat["sampling.stop"] == '["```"]' and flat["sandbox.timeout_s"] == "10.0"


def test_disabled_tracking_touches_nothing(tmp_path):
    cfg = make_cfg(tmp_path, enabled=False)
    assert ensure_store(cfg.tracking) is None
    assert log_job(cfg, tmp_path / "job", RECORDS, {"x": 1.0}, {}, []) is None
    assert not (tmp_path / "store").exists()


def test_log_job_round_trip(tmp_path):
    cfg = make_cfg(tmp_path)
    out = tmp_path / "outputs" / "job1"
    out.mkdir(parents=True)
    (out / "pass_counts.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (out / "summary.md").write_text("the job's own summary\n")
    metrics = summarize(RECORDS, resamples=100)
    tags = {"harness_version": "0.1.0", "task_set_hash": "abc123", "isolation": "process"}
    run_id = log_job(cfg, out, RECORDS, metrics, tags, task_table(RECORDS))

    client = MlflowClient(tracking_uri=cfg.tracking.uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "exp"
    assert run.data.params["model.name"] == "tiny"
    assert len(run.data.params["prompts.system"]) == 6000
    assert run.data.tags["task_set_hash"] == "abc123" and run.data.tags["model"] == "tiny"
    assert run.data.tags["seed"] == "7"
    assert "mlflow.parentRunId" not in run.data.tags
    assert run.data.metrics["pass_at_1_first"] == pytest.approx(0.0)
    assert run.data.metrics["pass_at_1_repair"] == pytest.approx(0.5)
    assert run.data.metrics["gate_rejections_first"] == 1
    assert run.info.artifact_uri.startswith((tmp_path / "store" / "artifacts").as_uri())

    top = {a.path for a in client.list_artifacts(run_id)}
    assert {"config.yaml", "attempts.jsonl", "summary.md", "metrics.md", "attempts", "plots", "tasks.json"} <= top
    summary = client.download_artifacts(run_id, "summary.md", str(tmp_path / "dl"))
    assert open(summary).read() == "the job's own summary\n"  # not overwritten
    attempt_dir = {a.path for a in client.list_artifacts(run_id, "attempts/HumanEval_0/0_0")}
    assert attempt_dir == {f"attempts/HumanEval_0/0_0/{n}" for n in ("code.py", "response.txt", "test_log.txt")}
    local = client.download_artifacts(run_id, "attempts/HumanEval_0/0_0/test_log.txt", str(tmp_path / "dl"))
    assert "assert 1 == 2" in open(local).read()
    table = json.loads(open(client.download_artifacts(run_id, "tasks.json", str(tmp_path / "dl"))).read())
    assert table["columns"][0] == "task_id" and [r[0] for r in table["data"]] == ["HumanEval/0", "t2"]
    logged = client.download_artifacts(run_id, "attempts.jsonl", str(tmp_path / "dl"))
    assert len(open(logged).read().splitlines()) == 3


def test_sweep_parent_with_nested_children(tmp_path):
    sweep = tmp_path / "multirun" / "2026-11-30" / "12-00-00"
    cfg = sweep_cfg(tmp_path, sweep)
    callback = MlflowSweepCallback()
    callback.on_multirun_start(cfg)
    parent = json.loads((sweep / PARENT_FILE).read_text())["run_id"]
    assert os.environ[PARENT_ENV] == parent

    children = []
    for num, seed in enumerate((1, 2)):
        job_cfg = make_cfg(tmp_path, seed=seed)
        out = sweep / f"{num}_tiny_s{seed}"
        out.mkdir(parents=True)
        (out / ".hydra").mkdir()
        (out / ".hydra" / "config.yaml").write_text(OmegaConf.to_yaml(job_cfg))
        (out / "attempts.jsonl").write_text("".join(r.to_json() + "\n" for r in RECORDS))
        children.append(log_job(job_cfg, out, RECORDS, summarize(RECORDS, resamples=50), {}, []))
    callback.on_multirun_end(cfg)

    client = MlflowClient(tracking_uri=cfg.tracking.uri)
    parent_run = client.get_run(parent)
    assert parent_run.info.status == "FINISHED"
    assert parent_run.data.tags["runner.role"] == "sweep"
    nested = client.search_runs([parent_run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent}'")
    assert sorted(r.info.run_id for r in nested) == sorted(children)
    assert sorted(r.data.tags["seed"] for r in nested) == ["1", "2"]
    report = {a.path for a in client.list_artifacts(parent, "report")}
    assert {"report/report.md", "report/pass_counts.png", "report/task_heatmap.png"} <= report
    assert PARENT_ENV not in os.environ
    # a single run afterwards is not nested under the finished sweep
    lone = log_job(make_cfg(tmp_path), tmp_path / "outputs" / "single", RECORDS, {}, {}, [])
    assert "mlflow.parentRunId" not in client.get_run(lone).data.tags


APP = """
import hydra
from pathlib import Path
from hydra.core.hydra_config import HydraConfig
from runner.config import Config, ModelConfig, TrackingConfig
from runner.records import AttemptRecord
from runner.results.scoring import summarize, task_table
from runner.tracking.runs import log_job


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(dict_cfg):
    tracking = TrackingConfig(**dict_cfg.tracking)
    cfg = Config(model=ModelConfig(name="tiny", id="x"), seed=dict_cfg.seed, tracking=tracking)
    out = Path(HydraConfig.get().runtime.output_dir)
    recs = [AttemptRecord(task_id="t", sample=0, attempt=0, seed=cfg.seed, model=cfg.model.name, messages=[],
            options={}, response="", code=None, outcome="passed" if cfg.seed == 1 else "failed", final=True)]
    (out / "attempts.jsonl").write_text("".join(r.to_json() + "\\n" for r in recs))
    log_job(cfg, out, recs, summarize(recs, resamples=20), {"harness_version": "test"}, task_table(recs))


main()
"""

CONFIG = """
model: {name: tiny}
seed: 1
tracking: {enabled: true, uri: "sqlite:///store/mlflow.db", experiment: sweep, artifact_root: store/artifacts}
hydra:
  callbacks:
    mlflow_sweep:
      _target_: runner.tracking.sweep_callback.MlflowSweepCallback
  sweep:
    dir: multirun/sweep1
    subdir: ${hydra.job.num}_${model.name}_s${seed}
"""


def test_real_hydra_multirun_nests_jobs(tmp_path):
    """A real `-m` sweep through Hydra's launcher: the callback's parent run gets both jobs nested."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "config.yaml").write_text(CONFIG)
    (tmp_path / "app.py").write_text(APP)
    env = {k: v for k, v in os.environ.items() if k != PARENT_ENV}
    proc = subprocess.run(
        [sys.executable, "app.py", "-m", "seed=1,2"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/store/mlflow.db")
    exp = client.get_experiment_by_name("sweep")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if r.data.tags.get("runner.role") == "sweep"]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parents[0].info.run_id]
    assert sorted(r.data.params["seed"] for r in children) == ["1", "2"]
    assert sorted(r.data.metrics["pass_at_1_first"] for r in children) == [0.0, 1.0]
    assert (tmp_path / "multirun" / "sweep1" / "report.md").is_file()


def test_runs_whose_process_died_are_ended_killed(tmp_path):
    """`kill -9` ends no run; the next job or sweep on this host ends it KILLED (a live process's run stays)."""
    cfg = make_cfg(tmp_path)
    experiment_id = ensure_store(cfg.tracking)
    client = MlflowClient(tracking_uri=cfg.tracking.uri)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = client.create_run(experiment_id, tags={**process_tags(), "runner.pid": str(gone.pid)}).info.run_id
    live = client.create_run(experiment_id, tags=process_tags()).info.run_id
    other_host = client.create_run(experiment_id, tags={"runner.host": "elsewhere", "runner.pid": str(gone.pid)})
    job = JobRun(cfg, tmp_path / "outputs" / "next")
    assert client.get_run(dead).info.status == "KILLED"
    assert client.get_run(live).info.status == "RUNNING"
    assert client.get_run(other_host.info.run_id).info.status == "RUNNING"
    assert client.get_run(job.run_id).info.status == "RUNNING"
    job.end("FINISHED")
    assert client.get_run(job.run_id).info.status == "FINISHED"
