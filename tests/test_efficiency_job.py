"""Efficiency end to end: real `python -m runner` jobs with efficiency on (seed10's default) against a real loopback
OpenAI-compatible server, and `runner.evaluate efficiency=true` on samples made elsewhere.

The server answers per model and task with known correct code: `lean` answers two_sum and is_palindrome as the
references do; `slow` answers two_sum with a nested loop (quadratic where the reference is linear) and
is_palindrome by rebuilding a string character by character and comparing it so (linear, about 3 times the
reference's instructions: a quadratic rebuild ran 0.9 s on the hidden suite's 180,000 characters, near its
reference-scaled CPU limit, and timed out on a busy host). Both pass every suite; the measure (valgrind's
instruction count in the sandbox, runner.efficiency.measure) tells them apart, and every surface shows it: the
records, summary.md, summary.json, the MLflow run's metrics, the job's figure, `runner.report` and its paired
comparison.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matplotlib.image
import pytest
import yaml
from mlflow.tracking import MlflowClient

from runner.records import read_attempts
from tests.conftest import datasets_available
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("two_sum", "is_palindrome")
SLOW = {
    "two_sum": (
        "def two_sum(nums, target):\n"
        "    for j in range(len(nums)):\n"
        "        for i in range(j):\n"
        "            if nums[i] + nums[j] == target:\n"
        "                return [i, j]\n"
        "    return []\n"
    ),
    "is_palindrome": (
        "def is_palindrome(s):\n"
        "    kept = ''\n"
        "    for ch in s:\n"
        "        if ch.isalnum():\n"
        "            kept = kept + ch.lower()\n"
        "    backwards = ''\n"
        "    for i in range(len(kept) - 1, -1, -1):\n"
        "        backwards = backwards + kept[i]\n"
        "    for i in range(len(kept)):\n"
        "        if kept[i] != backwards[i]:\n"
        "            return False\n"
        "    return True\n"
    ),
}

pytestmark = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)


def reference(task: str) -> str:
    return yaml.safe_load((ROOT / "tasks" / "seed10" / f"{task}.yaml").read_text())["reference"]


class ScriptedOpenAI(FakeOpenAI):
    """FakeOpenAI answering the code of the model asked for the task its prompt names."""

    _local = threading.local()  # each request is answered in its own thread

    @property
    def reply(self) -> str | None:
        return getattr(self._local, "reply", None)

    @reply.setter
    def reply(self, value: str | None) -> None:
        self._local.reply = value

    def _chat(self, h, body) -> None:
        prompt = next((m["content"] for m in body.get("messages") or [] if m["role"] == "user"), "")
        task = next(t for t in TASKS if t in prompt)
        code = SLOW[task] if body.get("model") == "slow" else reference(task)
        self._local.reply = f"```python\n{code}```\n"
        super()._chat(h, body)


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return done


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """Two finished jobs in one store, one per model, efficiency on as seed10 composes it; and one with it off."""
    tmp = tmp_path_factory.mktemp("efficiency")
    server = ScriptedOpenAI(models=("slow", "lean")).start()

    def job(name: str, model: str, *extra: str) -> subprocess.CompletedProcess:
        return run([
            sys.executable, "-m", "runner", "backend=openai", f"backend.base_url={server.url}/v1",
            f"model.id={model}", f"task_set.ids=[{','.join(TASKS)}]", "sandbox.workers=2", "progress=false",
            f"tracking.uri=sqlite:///{tmp}/mlflow.db", f"tracking.artifact_root={tmp}/artifacts",
            f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/{name}",
            "efficiency.budget=20",  # the quadratic two_sum is stopped sooner (a CPU limit scaled from the budget)
            *extra,
        ])  # fmt: skip

    try:
        with ThreadPoolExecutor(2) as both:  # two jobs at once on one store, as a sweep's joblib launcher runs them
            slow, lean = both.submit(job, "slow", "slow"), both.submit(job, "lean", "lean")
            out = {"slow": slow.result(), "lean": lean.result()}
        out["off"] = job("off", "lean", "efficiency=off")
    finally:
        server.stop()
    return {"tmp": tmp, "out": out}


def summary(jobs, name: str) -> dict:
    return json.loads((jobs["tmp"] / name / "summary.json").read_text())


def test_each_passing_answer_is_measured_and_recorded(jobs):
    for name in ("slow", "lean"):
        finals = [r for r in read_attempts(jobs["tmp"] / name / "attempts.jsonl") if r.final]
        assert sorted(r.task_id for r in finals) == sorted(TASKS) and all(r.passed for r in finals)
        for r in finals:
            e = r.efficiency
            assert e["status"] in ("measured", "too_slow"), e
            assert e["reference"]["status"] == "measured" and e["reference"]["instructions"] > 0
    lean = {r.task_id: r.efficiency for r in read_attempts(jobs["tmp"] / "lean" / "attempts.jsonl")}
    for task in TASKS:  # the reference's own code costs what the reference costs
        assert lean[task]["status"] == "measured" and lean[task]["instructions_ratio"] == pytest.approx(1.0, abs=0.05)
    off = read_attempts(jobs["tmp"] / "off" / "attempts.jsonl")
    assert off and all(r.efficiency is None for r in off)  # with it off nothing is measured


def test_summary_and_summary_json_show_the_scores(jobs):
    slow, lean = summary(jobs, "slow"), summary(jobs, "lean")
    assert lean["efficiency_instructions_ratio"] == pytest.approx(1.0, abs=0.05)
    assert lean["efficiency_lean_passes"] + lean["efficiency_slow_passes"] <= 2 and lean["efficiency_slow_passes"] == 0
    assert slow["efficiency_passes"] == 2 and slow["efficiency_slow_passes"] >= 1
    if "efficiency_instructions_ratio" in slow:
        assert slow["efficiency_instructions_ratio"] > 2 * lean["efficiency_instructions_ratio"]
    for name in ("slow", "lean"):
        text = (jobs["tmp"] / name / "summary.md").read_text()
        assert "**efficiency: instructions" in text and "| is_palindrome | 1/1 |" in text
        two_sum = "| two_sum | 0/1 | n/a | n/a | 1 | 0 | 1 | 0 |" if name == "slow" else "| two_sum | 1/1 |"
        assert two_sum in text  # the slow one: stopped over the budget, a slow pass without a ratio
        assert "efficiency: instructions" in jobs["out"][name].stdout  # printed at the job's end as well
    assert not any(k.startswith("efficiency_") for k in summary(jobs, "off"))
    assert "**efficiency:" not in (jobs["tmp"] / "off" / "summary.md").read_text()


def test_mlflow_runs_carry_the_efficiency_metrics(jobs):
    client = MlflowClient(f"sqlite:///{jobs['tmp']}/mlflow.db")
    experiment = client.get_experiment_by_name("runner")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    lean = runs["lean"].data.metrics
    for key in ("efficiency_instructions_ratio", "efficiency_instructions_ratio_ci_low",
                "efficiency_instructions_ratio_ci_high", "efficiency_memory_ratio", "efficiency_slow_passes",
                "efficiency_lean_passes", "efficiency_measured"):  # fmt: skip
        assert key in lean, key
    assert lean["efficiency_instructions_ratio"] == pytest.approx(
        summary(jobs, "lean")["efficiency_instructions_ratio"]
    )
    assert runs["slow"].data.metrics["efficiency_slow_passes"] >= 1
    assert "efficiency_passes" not in runs["off"].data.metrics


def test_the_job_figure_report_and_paired_comparison(jobs):
    tmp = jobs["tmp"]
    for name in ("slow", "lean"):
        image = matplotlib.image.imread(tmp / name / "figures" / "efficiency.png")
        assert image.ndim == 3 and image.std() > 0
    assert not (tmp / "off" / "figures" / "efficiency.png").exists()
    out = tmp / "report"
    done = run([sys.executable, "-m", "runner.report", str(tmp / "slow"), str(tmp / "lean"), f"out={out}"])
    text = (out / "report.md").read_text()
    assert "## Efficiency" in text and "efficiency: instructions" in text
    data = json.loads((out / "report.json").read_text())
    assert "efficiency.png" in data["figures"] and "Traceback" not in done.stderr
    repair = [c for c in data["comparisons"] if c.get("stage") == "repair"]
    assert len(repair) == 1
    pair = repair[0]
    assert pair["efficiency_tasks"] >= 1
    slower = pair["efficiency_ratio"] if pair["model_a"] == "slow" else 1 / pair["efficiency_ratio"]
    assert slower > 1.5  # the slow model's answers cost more, on the tasks both passed and measured
    assert "efficiency: slow's instructions ratio over lean's" in text or "efficiency: lean's" in text


def test_evaluate_efficiency_true_measures_samples_made_elsewhere(jobs, tmp_path):
    samples = tmp_path / "samples.jsonl"
    rows = [
        {"task_id": "two_sum", "solution": reference("two_sum")},
        {"task_id": "is_palindrome", "solution": SLOW["is_palindrome"]},
        {"task_id": "is_palindrome", "solution": "def is_palindrome(s):\n    return False\n"},
    ]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    # The jobs' cache: the references' costs are reused; these samples (another budget) are measured anew.
    done = run([sys.executable, "-m", "runner.evaluate", f"samples={samples}", f"out={out}", "efficiency=true",
                "task_set.ids=[two_sum,is_palindrome]", f"cache_dir={jobs['tmp']}/cache"])  # fmt: skip
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    verdicts = [(line["task_id"], line["outcome"], line["detail"][:300]) for line in lines] or done.stderr[-2000:]
    assert "efficiency: measuring 2 passing sample(s)" in done.stderr, verdicts
    assert lines[0]["efficiency"]["instructions_ratio"] == pytest.approx(1.0, abs=0.05)
    assert lines[1]["efficiency"]["instructions_ratio"] > 2  # string rebuilding: more work than the reference's
    assert lines[2]["passed"] is False and lines[2]["efficiency"] is None
    assert "efficiency: instructions" in done.stdout
    assert "| two_sum | 1/1 |" in done.stdout and "| is_palindrome | 1/1 |" in done.stdout


@pytest.mark.skipif(not datasets_available(), reason="benchmark files absent (RUNNER_DATASETS_DIR)")
def test_humaneval_borrows_the_perf_inputs_of_its_humanevalplus_twin(jobs, tmp_path):
    from runner.tasks.importers import load_humaneval

    canonical = {t.id: t.reference for t in load_humaneval()}["HumanEval/0"]
    linear = (
        "def has_close_elements(numbers, threshold):\n"
        "    ordered = sorted(numbers)\n"
        "    return any(b - a < threshold for a, b in zip(ordered, ordered[1:]))\n"
    )
    samples = tmp_path / "samples.jsonl"
    rows = [{"task_id": "HumanEval/0", "solution": canonical}, {"task_id": "HumanEval/0", "solution": linear}]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    done = run([sys.executable, "-m", "runner.evaluate", f"samples={samples}", f"out={out}", "efficiency=true",
                "task_set=humaneval", "task_set.ids=[HumanEval/0]", f"cache_dir={jobs['tmp']}/cache"])  # fmt: skip
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["passed"] for line in lines] == [True, True]
    assert [line["efficiency"]["status"] for line in lines] == ["measured", "measured"], done.stderr
    assert lines[0]["efficiency"]["instructions_ratio"] == pytest.approx(1.0, abs=0.05)
    # the canonical compares every pair, this sorts once (0.30 here: inputs this fast are picked by lines run, not time)
    assert lines[1]["efficiency"]["instructions_ratio"] < 0.9
