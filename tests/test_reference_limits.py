"""CPU limits scaled from each task's reference (runner.judging.reference_limits), in a job and in runner.evaluate."""

import dataclasses
import json

import pytest

from runner.evaluate import main
from runner.judging.judge import judge
from runner.judging.reference_limits import cpu_limit, cpu_limits, with_cpu_limit
from runner.outcome import Outcome
from runner.tasks.importers import load_humaneval
from runner.tasks.plus_oracle import DATA_FILE, MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR
from tests.test_judge import GATE, TASK, CountingPool

LOOP = "    while True:\n        pass\n"


def test_the_limit_is_evalplus_floor_and_factor_over_the_reference_time():
    assert cpu_limit(0.01) == MIN_TIME_LIMIT_S == 1.0
    assert cpu_limit(0.5) == TIME_LIMIT_FACTOR * 0.5 == 2.0
    rows = [
        {"task_id": "a", "status": "ok", "detail": "", "seconds": 0.02},
        {"task_id": "b", "status": "timeout", "detail": "", "seconds": 0.0},
        {"task_id": "c", "status": "ok", "detail": ""},
    ]  # fmt: skip  (a row cached without a time)
    assert cpu_limits(rows) == {"a": 1.0}


def test_the_limit_is_part_of_the_task_content_so_of_its_verdict_key():
    limited = with_cpu_limit(TASK, {TASK.id: 1.0})
    assert limited.cpu_limit_s == 1.0 and with_cpu_limit(TASK, {}) is TASK
    assert limited.content_hash() != TASK.content_hash()


def test_a_task_with_plus_inputs_keeps_its_per_input_limits_only():
    plus = dataclasses.replace(TASK, files={DATA_FILE: b"table"})
    assert with_cpu_limit(plus, {TASK.id: 1.0}) is plus


def test_a_loop_stops_at_the_tasks_cpu_limit_and_is_judged_once():
    sandbox = pytest.importorskip("runner.sandbox.workers.pool")
    # a wall clock far above the CPU limit: the loop uses its CPU second first, however busy the machine is
    limits = sandbox.Limits(timeout_s=30.0, cpu_s=30.0, memory_mb=256, hypothesis_examples=20)
    with sandbox.WorkerPool(workers=1, limits=limits) as pool:
        counting = CountingPool(pool)
        task = dataclasses.replace(TASK, cpu_limit_s=1.0)
        verdict = judge(task, "def double(x):\n" + LOOP, counting, GATE, suites=("hidden",))
    assert verdict.outcome is Outcome.TIMEOUT and "(1 s CPU)" in verdict.detail, verdict.detail
    assert counting.runs == 1


def test_evaluate_checks_the_references_first_and_limits_a_loop_by_its_reference(tmp_path, capsys):
    pytest.importorskip("runner.sandbox.workers.pool")
    task = {t.id: t for t in load_humaneval()}["HumanEval/0"]
    rows = [{"task_id": task.id, "completion": LOOP}, {"task_id": task.id, "solution": task.reference}]
    samples, out = tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = tmp_path / "cache"
    args = [f"samples={samples}", f"out={out}", "task_set=humaneval", f"task_set.ids=[{task.id}]", "workers=1",
            f"cache_dir={cache}", "suites=hidden"]  # fmt: skip
    assert main(args) == 0
    looping, correct = [json.loads(line) for line in out.read_text().splitlines()]
    assert looping["outcome"] == "timeout" and "(1 s CPU)" in looping["detail"], looping["detail"]
    assert correct["passed"] is True
    (gold,) = [json.loads(p.read_text()) for p in cache.rglob("*.json") if "gold" in str(p)]
    assert (gold["task_id"], gold["status"]) == (task.id, "ok") and gold["seconds"] > 0
