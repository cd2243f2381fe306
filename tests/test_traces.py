"""Real `python -m runner` jobs against a real loopback OpenAI-compatible server (tests/fake_openai.py): every
attempt becomes an MLflow trace of the job's run, the run logs its dataset and per-sample table, and two
job folders tell whether they used the same data.

The server answers every task with a correct `is_palindrome`: that task passes at once, `two_sum` fails its
first attempt and its repair (signature_mismatch), so a job makes three attempts of two outcomes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest

from runner.records import read_attempts
from runner.results.dataset_record import DatasetMismatch, dataset_mismatch, require_same_dataset, same_dataset
from runner.tracking.run_views import SAMPLES_TABLE, mlflow_metrics, sample_rows
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
GOOD = "```python\ndef is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n```"


def _job(server: FakeOpenAI, tmp: Path, name: str, *extra: str) -> Path:
    command = [
        sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1", "model.id=coder",
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): this job stays fast
        f"task_set.path={ROOT}/tasks/seed10", "sandbox.workers=1", "progress=false",
        f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts",
        f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/{name}", *extra,
    ]  # fmt: skip
    job = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert job.returncode == 0, job.stderr[-3000:]
    return tmp / name


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """Three finished jobs in one store: traced; the same data untraced; other data (one task of the two)."""
    tmp = tmp_path_factory.mktemp("traces")
    server = FakeOpenAI(models=("coder",), reply=GOOD).start()
    try:
        both = "task_set.ids=[is_palindrome,two_sum]"
        traced = _job(server, tmp, "traced", both)
        untraced = _job(server, tmp, "untraced", both, "tracking.traces=false", "seed=7")
        other = _job(server, tmp, "other", "task_set.ids=[is_palindrome]", "tracking.traces=false")
    finally:
        server.stop()
    uri = f"sqlite:///{tmp}/mlflow.db"
    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("runner")
    runs = {run.info.run_name: run for run in client.search_runs([experiment.experiment_id])}
    return {"uri": uri, "client": client, "experiment": experiment.experiment_id, "runs": runs,
            "dirs": {"traced": traced, "untraced": untraced, "other": other}}  # fmt: skip


def _traces(jobs, run_name: str, query: str = "") -> list:
    mlflow.set_tracking_uri(jobs["uri"])
    run_id = jobs["runs"][run_name].info.run_id
    return mlflow.search_traces(locations=[jobs["experiment"]], run_id=run_id, filter_string=query or None,
                                return_type="list")  # fmt: skip


def test_every_attempt_is_a_trace_of_its_run_with_tags_spans_and_outcome_assessment(jobs):
    records = read_attempts(jobs["dirs"]["traced"] / "attempts.jsonl")
    assert sorted((r.task_id, r.attempt, r.outcome.value) for r in records) == [
        ("is_palindrome", 0, "passed"), ("two_sum", 0, "signature_mismatch"), ("two_sum", 1, "signature_mismatch"),
    ]  # fmt: skip
    traces = _traces(jobs, "traced")
    assert len(traces) == len(records) == 3
    by_key = {(t.info.tags["task_id"], t.info.tags["attempt"]): t for t in traces}
    assert set(by_key) == {("is_palindrome", "0"), ("two_sum", "0"), ("two_sum", "1")}
    passed = mlflow.get_trace(by_key[("is_palindrome", "0")].info.trace_id)
    record = next(r for r in records if r.task_id == "is_palindrome")
    assert passed.info.tags["outcome"] == "passed" and passed.info.tags["sample"] == "0"
    assert passed.info.tags["final"] == "true" and passed.info.tags["model"] == "coder"
    assert [(a.name, a.value, a.source.source_id) for a in passed.info.assessments] == [
        ("outcome", "passed", "runner.judge")
    ]
    spans = {s.name: s for s in passed.data.spans}
    assert {"generation", "extraction", "gate", "tests", "suite visible", "suite hidden"} <= set(spans)
    generation = spans["generation"]
    assert generation.inputs["messages"] == record.messages
    assert generation.outputs["response"] == GOOD
    assert generation.attributes["runner.server"] == f"{record.server}" and record.server.startswith("http://127.")
    assert generation.attributes["mlflow.chat.tokenUsage"]["output_tokens"] == record.completion_tokens
    assert spans["extraction"].outputs["code"] == record.code
    hidden = spans["suite hidden"].outputs
    assert hidden["passed"] is True and hidden["tests"] == record.tests["hidden"]  # hidden tests, for the researcher
    assert all(t["status"] == "passed" and t["name"] for t in hidden["tests"])
    # the spans last as long as the record says: generation, then the tests
    assert generation.end_time_ns - generation.start_time_ns == round(record.generation_s * 1e9)
    assert spans["tests"].end_time_ns - spans["tests"].start_time_ns == round(record.test_s * 1e9)
    assert passed.info.token_usage["total_tokens"] == record.prompt_tokens + record.completion_tokens
    # no prompt names a hidden test
    hidden_names = {t["name"] for t in record.tests["hidden"]}
    assert not any(name in m["content"] for m in record.messages for name in hidden_names)


def test_traces_filter_by_outcome_and_task_and_are_off_with_traces_false(jobs):
    failed = _traces(jobs, "traced", "tags.outcome = 'signature_mismatch'")
    assert sorted(t.info.tags["attempt"] for t in failed) == ["0", "1"]
    assert {t.info.tags["task_id"] for t in failed} == {"two_sum"}
    assert [t.info.tags["outcome"] for t in _traces(jobs, "traced", "tags.task_id = 'is_palindrome'")] == ["passed"]
    repair = mlflow.get_trace(next(t for t in failed if t.info.tags["attempt"] == "1").info.trace_id)
    assert repair.info.assessments[0].value == "signature_mismatch"
    assert "not defined" in repair.info.assessments[0].rationale
    assert _traces(jobs, "untraced") == [] and _traces(jobs, "other") == []
    timings = json.loads((jobs["dirs"]["traced"] / "run.json").read_text())["timings"]
    assert (
        timings["traces_s"] > 0
        and "traces_s" not in json.loads((jobs["dirs"]["untraced"] / "run.json").read_text())["timings"]
    )


def test_each_run_logs_its_dataset_as_input_and_in_its_folder(jobs):
    traced, other = jobs["runs"]["traced"], jobs["runs"]["other"]
    (traced_input,), (other_input,) = traced.inputs.dataset_inputs, other.inputs.dataset_inputs
    record = json.loads((jobs["dirs"]["traced"] / "dataset.json").read_text())
    assert traced_input.dataset.name == "seed10" and record["name"] == "seed10"
    assert traced_input.dataset.digest == record["digest"][:36] == traced.data.tags["task_set_hash"][:36]
    assert json.loads(traced_input.dataset.source) == {"uri": str(ROOT / "tasks" / "seed10")}
    assert {t.key: t.value for t in traced_input.tags} == {
        "mlflow.data.context": "evaluation", "subset": "ids=is_palindrome,two_sum", "tasks": "2",
    }  # fmt: skip
    assert record["ids"] == ["is_palindrome", "two_sum"] and record["tasks"] == 2
    assert other_input.dataset.digest != traced_input.dataset.digest
    artifacts = {a.path for a in jobs["client"].list_artifacts(traced.info.run_id)}
    assert {"dataset.json", SAMPLES_TABLE} <= artifacts


def test_same_dataset_pairs_only_runs_of_the_same_data(jobs):
    dirs = jobs["dirs"]
    assert same_dataset(dirs["traced"], dirs["untraced"])
    assert dataset_mismatch(dirs["traced"], dirs["untraced"]) is None
    problem = dataset_mismatch(dirs["traced"], dirs["other"])
    assert problem is not None and "\n" not in problem
    assert "traced scored seed10 [ids=is_palindrome,two_sum] (2 tasks" in problem
    assert "other scored seed10 [ids=is_palindrome] (1 tasks" in problem
    require_same_dataset([dirs["traced"], dirs["untraced"]])
    with pytest.raises(DatasetMismatch, match="runs used different datasets"):
        require_same_dataset([dirs["traced"], dirs["untraced"], dirs["other"]])


def test_run_logs_a_per_sample_table_and_no_zero_count_outcome_rates(jobs):
    run = jobs["runs"]["traced"]
    table = json.loads(Path(jobs["client"].download_artifacts(run.info.run_id, SAMPLES_TABLE)).read_text())
    rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    assert [(r["task_id"], r["outcome_first"], r["outcome_repair"], r["attempts"]) for r in rows] == [
        ("is_palindrome", "passed", "passed", 1), ("two_sum", "signature_mismatch", "signature_mismatch", 2),
    ]  # fmt: skip
    records = read_attempts(jobs["dirs"]["traced"] / "attempts.jsonl")
    assert rows[1]["completion_tokens"] == sum(r.completion_tokens for r in records if r.task_id == "two_sum")
    assert rows[0]["test_s"] > 0 and rows[0]["violations"] == 0 and rows[0]["passed_first"] is True
    metrics = run.data.metrics
    recorded = json.loads((jobs["dirs"]["traced"] / "summary.json").read_text())
    assert recorded["outcome_first_failed_count"] == 0 and "outcome_first_failed_rate" not in metrics
    assert metrics["outcome_first_passed_rate"] == 0.5 and metrics["outcome_repair_signature_mismatch_count"] == 1
    assert metrics["pass_at_1_first"] == 0.5
    kept = {"pass_at_1_first", "pass_at_1_first_ci_low", "pass_at_1_first_ci_high", "pass_at_1_repair",
            "pass_at_1_repair_compliant", "gate_rejections_first", "unscored_samples", "tasks", "samples"}  # fmt: skip
    assert kept <= set(metrics)
    assert len(metrics) < len(recorded)


def test_mlflow_metrics_and_sample_rows_on_records_read_back(jobs):
    metrics = {"outcome_first_failed_count": 0.0, "outcome_first_failed_rate": 0.0, "outcome_first_passed_count": 0.0,
               "outcome_first_passed_rate": 0.0, "outcome_repair_timeout_count": 2.0,
               "outcome_repair_timeout_rate": 1.0, "pass_at_1_first": 0.0, "empty": None}  # fmt: skip
    assert mlflow_metrics(metrics) == {
        "outcome_first_passed_count": 0.0, "outcome_first_passed_rate": 0.0, "outcome_repair_timeout_count": 2.0,
        "outcome_repair_timeout_rate": 1.0, "pass_at_1_first": 0.0,
    }  # fmt: skip
    records = read_attempts(jobs["dirs"]["traced"] / "attempts.jsonl")
    rows = sample_rows(records + [r for r in records if r.task_id == "two_sum"])  # a resumed run's repeats
    assert [r["attempts"] for r in rows] == [1, 2]
