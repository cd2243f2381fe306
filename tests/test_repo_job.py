"""A mixed task set (function and repo tasks) through `python -m runner`: judged, scored, in MLflow.

The model is a real loopback OpenAI-compatible server whose one answer holds a Python block (solving
the function task) and a diff (fixing `slug_spaces`; it cannot apply to `span_dict`).
"""

import json
import subprocess
import sys
from pathlib import Path

from mlflow.tracking import MlflowClient

from tests.fake_openai import FakeOpenAI
from tests.repo_fixtures import FIXTURE_SET, SHARED_ENVS, slug_patch

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-7b"
REPLY = f"```python\ndef double(x):\n    return 2 * x\n```\n\nAnd the fix:\n\n```diff\n{slug_patch('')}```\n"


def test_a_mixed_task_set_runs_end_to_end_and_is_tracked(tmp_path):
    server = FakeOpenAI(models=(MODEL,), reply=REPLY).start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1",
             f"model.id={MODEL}", "model.name=fake", f"task_set.path={FIXTURE_SET}", "task_set.name=repo_fixture",
             "sandbox.workers=1", "progress=false", f"repo.env_dir={SHARED_ENVS}",
             f"tracking.uri=sqlite:///{tmp_path}/mlflow.db", f"tracking.artifact_root={tmp_path}/artifacts",
             f"cache_dir={tmp_path}/cache", f"hydra.run.dir={tmp_path}/run"],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in (tmp_path / "run" / "attempts.jsonl").read_text().splitlines()]
    final = {r["task_id"]: r["outcome"] for r in records if r["final"]}
    assert final == {"double": "passed", "slug_spaces": "passed", "span_dict": "patch_failed"}
    span = [r for r in records if r["task_id"] == "span_dict"]
    assert len(span) == 2 and "does not apply" in span[0]["detail"]  # repaired once, with git's complaint
    assert "Passed: 2/3 first attempt" in done.stdout
    gold = json.loads((tmp_path / "run" / "gold.json").read_text())
    assert {r["status"] for r in gold} == {"ok"} and len(gold) == 3
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("runner").experiment_id])
    assert run.info.status == "FINISHED" and run.data.tags["task_set"] == "repo_fixture"
    assert abs(run.data.metrics["pass_at_1_first"] - 2 / 3) < 1e-9
