"""Gold check statuses on small inline tasks, the CLI, the per-task cache, and all 164 HumanEval references."""

import json
import time

import pytest

from runner.caches.content import Cache
from runner.config import GateConfig
from runner.gold import main
from runner.judging.gold_check import GoldResult, classify, gold_rows, pip_name
from runner.kinds.base import Bench
from runner.kinds.registry import check_references
from runner.outcome import Outcome, SuiteResult, Verdict
from runner.outcome import TestResult as Result
from runner.tasks.importers import load_humaneval
from runner.tasks.model import Task
from tests.conftest import compose_config

REFERENCE = "def inc(x):\n    return x + 1\n"


def task(task_id: str, reference: str = REFERENCE, **suites: str) -> Task:
    suites = suites or {"visible": "def test_v():\n    assert inc(1) == 2\n"}
    return Task(task_id, "inc", "Add one.", reference, suites)


def test_pip_names():
    assert pip_name("yaml") == "PyYAML" and pip_name("sklearn.linear_model") == "scikit-learn"
    assert pip_name("cv2") == "opencv-python" and pip_name("PIL") == "Pillow" and pip_name("bs4") == "beautifulsoup4"
    assert pip_name("numpy") == "numpy"


def test_classify_without_a_sandbox():
    failed = SuiteResult("hidden", Outcome.FAILED, (Result("test_a", "failed", "assert 1 == 2"),))
    assert classify("t", Verdict(Outcome.PASSED)).status == "ok"
    assert classify("t", Verdict(Outcome.FAILED, {"hidden": failed}, "hidden: test_a failed")).status == "test_failed"
    assert classify("t", Verdict(Outcome.TIMEOUT, detail="hidden: timeout")).status == "timeout"
    missing = Verdict(Outcome.HARNESS_ERROR, detail="ModuleNotFoundError: No module named 'bs4.element'")
    result = classify("t", missing)
    assert (result.status, result.modules) == ("env_missing_module", ("bs4",))
    assert "pip install beautifulsoup4" in result.detail
    suite = SuiteResult("hidden", Outcome.HARNESS_ERROR, (), "test-only module missing: yaml")
    result = classify("t", Verdict(Outcome.HARNESS_ERROR, {"hidden": suite}, "hidden: harness_error"))
    assert (result.status, result.modules) == ("env_missing_module", ("yaml",))
    assert "yaml (pip install PyYAML)" in result.detail
    assert classify("t", Verdict(Outcome.ERROR, detail="ImportError: cannot import name 'x'")).status == (
        "env_import_error"
    )


@pytest.fixture(scope="module")
def pool():
    sandbox = pytest.importorskip("runner.sandbox.workers.pool")
    with sandbox.WorkerPool(workers=2, limits=sandbox.Limits(timeout_s=3.0, cpu_s=3.0)) as running:
        yield running


def test_gold_statuses(pool):
    tasks = [
        task("ok"),
        task("wrong_reference", "def inc(x):\n    return x\n"),
        task("needs_cv2", hidden="import cv2\n\ndef test_h():\n    assert inc(1) == 2\n"),
        task("no_tests", hidden="VALUE = 1\n"),
        task("slow", "def inc(x):\n    while True:\n        pass\n"),
    ]
    results = {r.task_id: r for r in check_references(tasks, Bench(pool))}
    assert [r.task_id for r in check_references(tasks[:2], Bench(pool))] == ["ok", "wrong_reference"]
    assert results["ok"].status == "ok"
    assert results["wrong_reference"].status == "test_failed" and "test_v" in results["wrong_reference"].detail
    assert results["needs_cv2"].status == "env_missing_module"
    assert "cv2 (pip install opencv-python)" in results["needs_cv2"].detail
    assert results["no_tests"].status == "no_tests_collected"
    assert results["slow"].status == "timeout"


STDLIB = GateConfig(name="stdlib", allowed_imports=["math"], allow_classes=True, allow_extra_top_level=True)


def test_gold_applies_the_task_sets_gate_in_its_mode(pool):
    evaluating = task("evaluating", "def inc(x):\n    return eval('x + 1')\n")
    enforced = check_references([evaluating, task("ok")], Bench(pool, STDLIB))
    assert [r.status for r in enforced] == ["policy_rejected", "ok"]  # its own gate rejects it: never gold ok
    assert "forbidden-call" in enforced[0].detail
    reported = check_references([evaluating], Bench(pool, GateConfig(**{**STDLIB.__dict__, "mode": "report"})))
    assert reported[0].ok and "gate violations (reported only): rule forbidden-call at line 2" in reported[0].detail


def test_humaneval_160_is_rejected_by_its_gate_in_enforce_mode(pool):
    tasks = [t for t in load_humaneval() if t.id == "HumanEval/160"]
    cfg = compose_config(["task_set=humaneval", "gate.mode=enforce"])
    assert [r.status for r in check_references(tasks, Bench(pool, cfg.gate))] == ["policy_rejected"]


def test_all_humaneval_references_pass_gold(pool):
    tasks = load_humaneval()
    gate = compose_config(["task_set=humaneval"]).gate  # the gate the task set uses: stdlib, report mode
    start = time.monotonic()
    results = check_references(tasks, Bench(pool, gate))
    elapsed = time.monotonic() - start
    bad = [(r.task_id, r.status, r.detail[:200]) for r in results if not r.ok]
    assert len(results) == 164 and not bad, bad
    print(f"gold check of 164 HumanEval tasks: {elapsed:.1f} s")


def test_cli_writes_report_and_exit_code(tmp_path, capsys):
    pytest.importorskip("runner.sandbox.workers.pool")
    out = tmp_path / "gold.json"
    ids = "[HumanEval/0,HumanEval/1]"
    assert main(["task_set=humaneval", f"task_set.ids={ids}", f"out={out}"]) == 0
    report = json.loads(out.read_text())
    assert [{k: row[k] for k in ("task_id", "status", "detail")} for row in report] == [
        {"task_id": "HumanEval/0", "status": "ok", "detail": ""},
        {"task_id": "HumanEval/1", "status": "ok", "detail": ""},
    ]
    assert all(0 < row["seconds"] < 60 for row in report)  # the reference's time, which scales its CPU limit
    assert "2/2 ok" in capsys.readouterr().out


def test_gold_rows_are_cached_task_by_task_so_a_subset_runs_no_reference_again(tmp_path):
    tasks = load_humaneval()[:3]
    ids = [t.id for t in tasks]
    checked = []

    def check(ts: list[Task]) -> list[GoldResult]:
        checked.append([t.id for t in ts])
        return [GoldResult(t.id, "ok", seconds=0.5) for t in ts]

    cache = Cache(tmp_path)
    rows, cached = gold_rows(tasks[:2], cache, ("limits",), check)
    assert (cached, checked, [r["task_id"] for r in rows]) == (0, [ids[:2]], ids[:2])
    rows, cached = gold_rows(tasks[1:2], cache, ("limits",), check)  # a subset: a job's task_set.ids
    assert (cached, len(checked), rows) == (1, 1, [{"task_id": ids[1], "status": "ok", "detail": "", "seconds": 0.5}])
    rows, cached = gold_rows(tasks[::-1], cache, ("limits",), check)  # a superset, in another order
    assert (cached, checked[-1], [r["task_id"] for r in rows]) == (2, [ids[2]], ids[::-1])
    _, cached = gold_rows(tasks[:1], cache, ("other limits",), check)  # what the row depends on is in its key
    assert (cached, checked[-1]) == (0, ids[:1])
