"""Gate modes: enforce (a violation is the outcome) and report (the code runs; violations are recorded),
which task sets select them, and how scoring shows functional and policy-compliant pass@k."""

import pytest

from runner.config import GateConfig
from runner.judging.judge import judge, precheck, repair_allowed
from runner.records import AttemptRecord
from runner.results.scoring import summarize
from runner.tasks.model import Task
from tests.conftest import compose_config

CODE = "import os\n\n\ndef inc(x):\n    return x + 1\n\n\nprint(inc(1))\n"
TASK = Task("inc", "inc", "Add one.", "def inc(x):\n    return x + 1\n",
            {"visible": "def test_v():\n    assert inc(1) == 2\n"})  # fmt: skip
STDLIB = dict(name="stdlib", allowed_imports=["math"], allow_classes=True, allow_extra_top_level=True)


@pytest.fixture(scope="module")
def pool():
    sandbox = pytest.importorskip("runner.sandbox.workers.pool")
    with sandbox.WorkerPool(workers=1, limits=sandbox.Limits(timeout_s=5.0, cpu_s=5.0)) as running:
        yield running


def test_enforce_mode_rejects_before_running(pool):
    verdict = judge(TASK, CODE, pool, GateConfig(**STDLIB, mode="enforce"))
    assert verdict.outcome == "policy_rejected" and verdict.rule == "no-import" and not verdict.suites
    assert not verdict.violations and repair_allowed(verdict)


def test_report_mode_runs_the_code_and_records_every_violation(pool):
    gate = GateConfig(**STDLIB, mode="report")
    assert precheck(TASK, CODE, gate) is None
    verdict = judge(TASK, CODE, pool, gate)
    assert verdict.outcome == "passed" and verdict.rule is None and verdict.suites["visible"].passed
    assert [(v["rule"], v["line"]) for v in verdict.violations] == [("no-import", 1), ("no-top-level-code", 8)]
    assert "import os" in verdict.violations[0]["message"]
    assert verdict.passed and not verdict.compliant
    assert not repair_allowed(verdict)  # violations alone never send a candidate back for repair


def test_report_mode_keeps_the_functional_failure(pool):
    verdict = judge(TASK, CODE.replace("x + 1", "x"), pool, GateConfig(**STDLIB, mode="report"))
    assert verdict.outcome == "failed" and len(verdict.violations) == 2


@pytest.mark.parametrize(
    ("overrides", "gate", "mode", "prompts"),
    [
        ([], "builtins_only", "enforce", "published"),
        (["task_set=humaneval"], "stdlib", "report", "evalplus"),
        (["task_set=humanevalplus"], "stdlib", "report", "evalplus"),
        (["task_set=mbppplus"], "stdlib", "report", "evalplus"),
        (["task_set=mbpp"], "stdlib", "report", "evalplus"),
        (["task_set=humanevalplus_mini"], "stdlib", "report", "evalplus"),
        (["task_set=humaneval", "gate.mode=enforce", "prompts=completion"], "stdlib", "enforce", "completion"),
        (["gate.mode=report", "prompts=evalplus"], "builtins_only", "report", "evalplus"),
    ],
)
def test_task_sets_select_gate_mode_and_prompt_set(overrides, gate, mode, prompts):
    cfg = compose_config(overrides)
    assert (cfg.gate.name, cfg.gate.mode, cfg.prompts.name) == (gate, mode, prompts)


def _record(task_id, outcome, violations=()):
    return AttemptRecord(task_id=task_id, sample=0, attempt=0, seed=0, model="m", messages=[], options={},
                         response="", code="", outcome=outcome, final=True, violations=list(violations))  # fmt: skip


def test_summary_metrics_show_functional_and_compliant_pass_at_1_side_by_side():
    violation = {"rule": "forbidden-call", "line": 3, "message": "calling `eval` is not allowed"}
    records = [_record("a", "passed"), _record("b", "passed", [violation]), _record("c", "failed", [violation]),
               _record("d", "failed")]  # fmt: skip
    metrics = summarize(records, resamples=50)
    assert metrics["pass_at_1_first"] == 0.5 and metrics["pass_at_1_first_compliant"] == 0.25
    assert metrics["pass_at_1_repair_compliant"] == 0.25 and "pass_at_1_repair_compliant_ci_low" in metrics
    assert metrics["gate_violations_reported_first"] == 2 and metrics["gate_rejections_first"] == 0
