"""A job on an EvalPlus task set: base and base+plus in the summary and MLflow, and its subset tagged."""

import json

import mlflow
import pytest

from runner.job.run import run_job
from runner.results.scoring import summarize
from runner.results.summary import summary_table
from runner.tasks import subset_tag
from tests.conftest import datasets_available, typed_test_config
from tests.fake_ollama import FakeOllama


def test_subset_tag_names_ids_and_limit(make_config):
    assert subset_tag(make_config([]).task_set) == ""
    assert subset_tag(make_config(["task_set.limit=5"]).task_set) == "limit=5"
    assert subset_tag(make_config(["task_set.ids=[a,b]", "task_set.limit=1"]).task_set) == "ids=a,b; limit=1"


@pytest.mark.skipif(not datasets_available(), reason="benchmark files absent (RUNNER_DATASETS_DIR)")
def test_humanevalplus_job_reports_base_and_base_plus_and_tags_the_subset(tmp_path, capsys):
    fake = FakeOllama().start()  # a real loopback server answering like Ollama (with code that fails)
    try:
        cfg = typed_test_config([
            "task_set=humanevalplus", "task_set.ids=[HumanEval/2,HumanEval/4]", "backend=ollama",
            f"backend.base_url={fake.url}", "model=gemma3_4b", "model.id=gemma3:4b", "repair.max_repairs=0",
            "progress=false",
            f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"tracking.artifact_root={tmp_path}/artifacts",
            f"cache_dir={tmp_path}/cache",
        ])  # fmt: skip
        run_job(cfg, tmp_path / "job")
    finally:
        fake.stop()
    printed = capsys.readouterr().out
    assert "base pass@1 first: 0.000" in printed and "base+plus pass@1 first: 0.000" in printed
    metrics = json.loads((tmp_path / "job" / "summary.json").read_text())
    assert metrics["pass_at_1_first_base"] == 0.0 and metrics["pass_at_1_first_base_plus_tasks"] == 2.0
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path}/mlflow.db")
    (run,) = mlflow.search_runs(experiment_names=["runner"], output_format="list")
    assert run.data.tags["task_subset"] == "ids=HumanEval/2,HumanEval/4"
    assert "pass_at_1_first_base" in run.data.metrics and "pass_at_1_repair_base_plus_ci_high" in run.data.metrics


def test_summary_table_shows_base_levels_only_when_scored(make_config):
    from runner.records import AttemptRecord

    def record(task_id, suites):
        outcome = "passed" if all(suites.values()) else "failed"
        return AttemptRecord(task_id, 0, 0, 0, "m", [], {}, "", "", outcome, True, suites=suites)

    records = [record("a", {"visible": True, "hidden": True, "properties": False}),
               record("b", {"visible": True, "hidden": True, "properties": True})]  # fmt: skip
    cfg = make_config(["task_set=humanevalplus"])
    plain = summary_table(cfg, summarize(records), [])
    assert "pass@1 first: 0.500" in plain and "base pass@1" not in plain
    metrics = summarize(records, levels=("all", "base", "base_plus"))
    table = summary_table(cfg, metrics, [])
    assert "base pass@1 first: 1.000" in table and "base+plus pass@1 first: 0.500" in table
