"""`runner.report` and the figures on folders real `python -m runner` runs wrote: one job, a sweep, a killed job.

The jobs talk to a real loopback OpenAI-compatible server (tests/fake_openai.py) that answers per model,
task and attempt, so the two models differ on known tasks: coder-a passes two_sum first, is_palindrome only
after repair and never common_prefix; coder-b passes two_sum and is_palindrome first, never common_prefix.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import matplotlib.image
import matplotlib.pyplot as plt
import pytest
import yaml
from mlflow.tracking import MlflowClient

from runner.results.job_figures import pass_at_1_figure, task_outcomes_figure
from runner.results.job_folder import load_job
from tests.fake_openai import FakeOpenAI
from tests.test_job_lifecycle import wait_for

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("two_sum", "is_palindrome", "common_prefix")
MODELS = ("coder-a", "coder-b")


def _reference(task: str) -> str:
    return yaml.safe_load((ROOT / "tasks" / "seed10" / f"{task}.yaml").read_text())["reference"]


WRONG = {
    "is_palindrome": "def is_palindrome(s):\n    return False\n",
    "common_prefix": "def common_prefix(strings):\n    return 'x'\n",
}


def answer(model: str, task: str, repair: bool) -> str:
    """The code each model answers for each task, first attempt or repair (see the module docstring)."""
    right = task == "two_sum" or (task == "is_palindrome" and (model == "coder-b" or repair))
    code = _reference(task) if right else WRONG[task]
    return f"```python\n{code}```\n"


class ScriptedOpenAI(FakeOpenAI):
    """FakeOpenAI whose answer depends on the request: the model, the task its prompt names, first or repair."""

    _local = threading.local()  # each request is answered in its own thread

    @property
    def reply(self) -> str | None:
        return getattr(self._local, "reply", None)

    @reply.setter
    def reply(self, value: str | None) -> None:
        self._local.reply = value

    def _chat(self, h, body) -> None:
        messages = body.get("messages") or []
        prompt = next((m["content"] for m in messages if m["role"] == "user"), "")
        task = next((t for t in TASKS if t in prompt), "two_sum")
        self._local.reply = answer(body.get("model", ""), task, repair="previous implementation" in prompt)
        super()._chat(h, body)


@pytest.fixture
def server():
    running = ScriptedOpenAI(models=MODELS).start()
    yield running
    running.stop()


def command(tmp: Path, name: str, server: FakeOpenAI, *extra: str, sweep: bool = False) -> list[str]:
    return [
        sys.executable, "-m", "runner", *(["-m"] if sweep else []),
        "efficiency.enabled=false",  # measured apart (tests/test_efficiency_job.py): these jobs stay fast
        "backend=openai", f"backend.base_url={server.url}/v1", "backend.max_retries=0", "backend.max_concurrency=1",
        f"task_set.ids=[{','.join(TASKS)}]", "sandbox.workers=1", "gold.enabled=false",
        f"tracking.uri=sqlite:///{tmp}/store/mlflow.db", f"tracking.artifact_root={tmp}/store/artifacts",
        f"cache_dir={tmp}/cache", f"hydra.run.dir={tmp}/{name}", f"hydra.sweep.dir={tmp}/{name}", *extra,
    ]  # fmt: skip


def run(cmd: list[str], code: int = 0) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == code, (out.stdout + out.stderr)[-3000:]
    return out


def report(*paths: Path, out: Path | None = None) -> dict:
    """`python -m runner.report` as a user runs it; the report.json it wrote (in `out` or the first path)."""
    extra = [f"out={out}"] if out else []
    done = run([sys.executable, "-m", "runner.report", *map(str, paths), *extra])
    assert "Traceback" not in done.stderr
    folder = out or paths[0]
    assert (folder / "report.md").is_file()
    data = json.loads((folder / "report.json").read_text())
    for name in data["figures"]:
        assert_png(folder / name)
    return data


def assert_png(path: Path) -> None:
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and min(image.shape[:2]) > 200 and image.std() > 0, path  # drawn, not blank


def artifacts(client: MlflowClient, run_id: str, path: str) -> set[str]:
    return {Path(f.path).name for f in client.list_artifacts(run_id, path)}


def test_a_job_writes_and_logs_its_figures_and_the_report_reads_its_folder(tmp_path, server):
    out = run(command(tmp_path, "job", server, "model.id=coder-a"))
    job = tmp_path / "job"
    files_line = next(line for line in out.stdout.splitlines() if line.startswith("Files in "))
    assert files_line.endswith("summary.json, run.json, dataset.json, figures/pass_at_1.png, figures/task_outcomes.png")
    assert "attempts.jsonl" in files_line and files_line in (job / "summary.md").read_text()
    for name in ("pass_at_1.png", "task_outcomes.png"):
        assert_png(job / "figures" / name)
    client = MlflowClient(f"sqlite:///{tmp_path}/store/mlflow.db")
    (logged,) = client.search_runs([client.get_experiment_by_name("runner").experiment_id])
    assert artifacts(client, logged.info.run_id, "figures") == {"pass_at_1.png", "task_outcomes.png"}

    data = report(job)  # the config as the job resolved it (its config.yaml), not .hydra/config.yaml's interpolations
    (row,) = data["runs"]
    assert (row["model"], row["seed"], row["task_set"], row["status"]) == ("coder_a", 42, "seed10", "finished")
    assert row["metrics"]["pass_at_1_first"] == pytest.approx(1 / 3)
    assert row["metrics"]["pass_at_1_repair"] == pytest.approx(2 / 3)
    assert "figures/pass_at_1.png" in data["figures"] and "figures/task_outcomes.png" in data["figures"]
    (job / "config.yaml").unlink()  # left: Hydra's .hydra/config.yaml, model.name still ${model_name:${.id}}
    assert [(r["model"], r["seed"]) for r in report(job, out=tmp_path / "from_hydra")["runs"]] == [("coder_a", 42)]

    loaded = load_job(job)
    loaded.metrics = json.loads((job / "summary.json").read_text())
    fig = pass_at_1_figure(loaded)
    try:
        heights = [round(p.get_height(), 6) for p in fig.axes[0].patches]
        assert heights == [round(100 / 3, 6), round(200 / 3, 6), round(100 / 3, 6), round(200 / 3, 6)]
        assert all(word in fig._suptitle.get_text() for word in ("coder_a", "seed 42", "seed10"))
        assert fig.axes[0].get_ylabel().startswith("pass@1")
    finally:
        plt.close(fig)
    fig = task_outcomes_figure(loaded)
    try:
        ax = fig.axes[0]
        rows = [t.get_text() for t in ax.get_yticklabels()]
        assert rows == ["common_prefix", "is_palindrome", "two_sum"]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["first attempt", "after repair"]
        legend = {t.get_text() for t in fig.legends[0].get_texts()}
        assert legend == {"passed (3)", "failed (3)"}  # common_prefix x2, is_palindrome first
    finally:
        plt.close(fig)


def test_a_sweep_writes_its_figures_logs_them_to_the_parent_and_the_report_reads_it(tmp_path, server):
    out = run(command(tmp_path, "sweep", server, "model.id=coder-a,coder-b", "seed=1,2", sweep=True))
    sweep = tmp_path / "sweep"
    assert (sweep / "figures" / "sweep_pass_at_1.png").is_file(), out.stderr[-2000:]
    client = MlflowClient(f"sqlite:///{tmp_path}/store/mlflow.db")
    found = client.search_runs([client.get_experiment_by_name("runner").experiment_id])
    (parent,) = [r for r in found if r.data.tags.get("runner.role") == "sweep"]
    assert artifacts(client, parent.info.run_id, "figures") == {"sweep_pass_at_1.png", "sweep_paired.png"}
    verdicts = {k: v for k, v in parent.data.tags.items() if k.startswith("runner.verdict.")}
    assert len(verdicts) == 10 and parent.data.tags["runner.seed_warnings"] == "0"  # 5 comparisons x 2 stages
    pooled = verdicts["runner.verdict.coder_a vs coder_b.first"]
    assert pooled.startswith("coder_a vs coder_b on ") and "no detectable difference" in pooled
    assert parent.data.metrics["compare/coder_a vs coder_b/first/diff"] == pytest.approx(-1 / 3)
    jobs = [r for r in found if r.data.tags.get("runner.role") != "sweep"]
    assert len(jobs) == 4
    assert all(artifacts(client, r.info.run_id, "figures") == {"pass_at_1.png", "task_outcomes.png"} for r in jobs)

    data = report(sweep, out=tmp_path / "again")
    assert {(r["model"], r["seed"]) for r in data["runs"]} == {(m, s) for m in ("coder_a", "coder_b") for s in (1, 2)}
    assert {"figures/sweep_pass_at_1.png", "figures/sweep_paired.png"} <= set(data["figures"])
    first = [c for c in data["comparisons"] if c["stage"] == "first"]
    models = [c for c in first if c["model_a"] != c["model_b"]]  # seed 1, seed 2, then both seeds pooled
    assert [c["job_a"] for c in models] == ["0_coder_a_s1", "1_coder_a_s2", "coder_a"]
    assert all(c["diff"] == pytest.approx(-1 / 3) for c in models)
    assert [(c["b"], c["c"], c["k_a"]) for c in models] == [(0, 1, 1), (0, 1, 1), (0, 2, 2)]
    seeds = [c for c in first if c["model_a"] == c["model_b"]]  # each model's seed 1 against its seed 2
    assert [(c["job_a"], c["job_b"], c["verdict"]) for c in seeds] == [
        ("0_coder_a_s1", "1_coder_a_s2", "no_detectable_difference"),
        ("2_coder_b_s1", "3_coder_b_s2", "no_detectable_difference"),
    ]

    from runner.results.compare import compare_jobs
    from runner.results.sweep_figures import sweep_paired_figure, sweep_pass_at_1_figure

    loaded = [load_job(d) for d in sorted(p for p in sweep.iterdir() if (p / "attempts.jsonl").is_file())]
    for j in loaded:
        j.metrics = json.loads((j.path / "summary.json").read_text())
    fig = sweep_pass_at_1_figure(loaded)
    try:
        first_panel = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
        assert first_panel == [round(100 / 3, 6)] * 2 + [round(200 / 3, 6)] * 2  # a: 1/3 per seed, b: 2/3
        assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["coder_a", "coder_b"]
    finally:
        plt.close(fig)
    fig = sweep_paired_figure(compare_jobs(loaded), loaded)
    try:
        assert len(fig.axes[0].get_yticklabels()) == 10  # (2 seeds, pooled, 2 seed checks) x 2 stages
    finally:
        plt.close(fig)

    several = report(sweep / "0_coder_a_s1", sweep / "3_coder_b_s2", out=tmp_path / "two")
    assert len(several["runs"]) == 2 and "figures/sweep_paired.png" in several["figures"]


@pytest.mark.parametrize("records", [1, 0])
def test_the_report_reads_a_killed_jobs_folder(tmp_path, server, records):
    """SIGTERM once the job recorded `records` attempt(s) and its next request hangs: a partial attempts.jsonl."""
    server.queue(*["ok"] * records, *["hang"] * 10)
    proc = subprocess.Popen(command(tmp_path, "killed", server, "model.id=coder-a"), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    attempts = tmp_path / "killed" / "attempts.jsonl"
    wait_for(lambda: len(server.chat_requests()) > records, what="the hanging request", proc=proc)
    wait_for(lambda: (attempts.read_text().count("\n") if attempts.is_file() else 0) >= records, what="records")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert not (tmp_path / "killed" / "summary.json").exists()

    data = report(tmp_path / "killed")
    (row,) = data["runs"]
    assert (row["model"], row["status"]) == ("coder_a", "incomplete")
    assert row["metrics"]["samples"] == records
    assert {"figures/pass_at_1.png", "figures/task_outcomes.png"} <= set(data["figures"])
    assert (
        "incomplete (no summary.json: the job failed or was killed)" in (tmp_path / "killed" / "report.md").read_text()
    )
