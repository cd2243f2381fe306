"""Scoring externally generated samples: both input formats, order, pass@k, the CLI."""

import gzip
import json

import pytest
from hydra.errors import HydraException

from runner.cli import UsageError
from runner.evaluate import main
from runner.judging.samples import InputSample, SampleError, read_samples
from runner.outcome import Outcome, SuiteResult, TestResult, Verdict
from runner.override_errors import message
from runner.results.samples_summary import score, summary
from runner.tasks.importers import load_humaneval
from runner.validation import ConfigError

TASKS = {t.id: t for t in load_humaneval()[:3]}
T0, T1 = "HumanEval/0", "HumanEval/1"


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_both_formats_detected_per_line_with_completion_ids(tmp_path):
    rows = [
        {"task_id": T0, "completion": "    return False\n"},
        {"task_id": T1, "solution": "def separate_paren_groups(s):\n    return []\n"},
        {"task_id": T0, "solution": "def has_close_elements(a, b):\n    return True\n"},
    ]
    samples = read_samples(write(tmp_path / "s.jsonl", rows), TASKS)
    assert [(s.task_id, s.completion_id) for s in samples] == [(T0, 0), (T1, 0), (T0, 1)]
    assert samples[0].code == TASKS[T0].prompt + "    return False\n"
    assert samples[1].code == rows[1]["solution"]


def test_a_gzipped_samples_file_reads_as_the_plain_one(tmp_path):
    rows = [{"task_id": T0, "completion": "    return False\n"}, {"task_id": T1, "solution": "def f():\n    pass\n"}]
    plain = write(tmp_path / "s.jsonl", rows)
    packed = tmp_path / "s.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_samples(packed, TASKS) == read_samples(plain, TASKS)
    assert len(read_samples(packed, TASKS)) == 2


def test_unknown_task_ids_are_named(tmp_path):
    rows = [{"task_id": "HumanEval/9999", "completion": "x"}, {"task_id": "Nope/1", "completion": "x"}]
    with pytest.raises(SampleError, match=r"2 task id\(s\).*HumanEval/9999, Nope/1"):
        read_samples(write(tmp_path / "s.jsonl", rows), TASKS)


def test_bad_lines_are_located(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"task_id": "HumanEval/0", "completion": "x"}\nnot json\n')
    with pytest.raises(SampleError, match=r"a.jsonl:2: not JSON"):
        read_samples(tmp_path / "a.jsonl", TASKS)
    write(tmp_path / "b.jsonl", [{"task_id": T0, "text": "x"}])
    with pytest.raises(SampleError, match=r"b.jsonl:1: needs `completion`"):
        read_samples(tmp_path / "b.jsonl", TASKS)


def test_pass_at_k_uses_the_unbiased_estimator_and_skips_unscored():
    samples = [InputSample(T0, i, "") for i in range(10)] + [InputSample(T1, i, "") for i in range(11)]
    outcomes = [Outcome.PASSED] * 3 + [Outcome.FAILED] * 7 + [Outcome.PASSED] * 10 + [Outcome.HARNESS_ERROR]
    verdicts = [Verdict(o) for o in outcomes]
    metrics = score(samples, verdicts)
    assert "pass_at_100_first" not in metrics  # n = 10 for both tasks once the harness error is dropped
    assert metrics["pass_at_1_first"] == pytest.approx((0.3 + 1.0) / 2)
    assert metrics["pass_at_10_first"] == pytest.approx(1.0)
    assert metrics["pass_at_1_first_ci_low"] <= metrics["pass_at_1_first"] <= metrics["pass_at_1_first_ci_high"]
    printed = summary(samples, verdicts)
    assert "pass@1 " in printed and "pass@10" in printed and "pass@100" not in printed and "95% CI" in printed


def test_base_and_base_plus_follow_the_hidden_and_properties_suites():
    def verdict(hidden, properties):
        suites = {"visible": SuiteResult("visible", Outcome.PASSED), "hidden": SuiteResult("hidden", hidden),
                  "properties": SuiteResult("properties", properties)}  # fmt: skip
        passed = hidden is properties is Outcome.PASSED
        return Verdict(Outcome.PASSED if passed else Outcome.FAILED, suites=suites)

    samples = [InputSample(T0, 0, ""), InputSample(T1, 0, "")]
    verdicts = [verdict(Outcome.PASSED, Outcome.FAILED), verdict(Outcome.PASSED, Outcome.PASSED)]
    metrics = score(samples, verdicts, ("base", "base_plus"))
    assert metrics["pass_at_1_first_base"] == 1.0 and metrics["pass_at_1_first_base_plus"] == 0.5
    printed = summary(samples, verdicts, ("base", "base_plus"))
    assert "base pass@1          1.0000 (95% CI" in printed and "base+plus pass@1     0.5000" in printed


def test_cli_scores_both_formats_in_input_order(tmp_path, capsys):
    pytest.importorskip("runner.sandbox.workers.pool")
    tasks = load_humaneval()
    by_id = {t.id: t for t in tasks}
    canonical_0 = by_id[T0].reference[len(by_id[T0].prompt) :]
    rows = [
        {"task_id": T1, "solution": by_id[T1].reference, "key": 7, "passed": "theirs"},  # EvalPlus format, correct
        {"task_id": T0, "completion": "    return True\n"},  # human-eval format, wrong
        {"task_id": T0, "completion": canonical_0},  # human-eval format, correct
        {"task_id": T0, "solution": "import os\n" + by_id[T0].reference},  # breaks the stdlib gate's no-import
    ]
    samples, out = write(tmp_path / "s.jsonl", rows), tmp_path / "out.jsonl"
    args = [f"samples={samples}", f"out={out}", "task_set=humaneval", f"task_set.ids=[{T0},{T1}]"]
    assert main([*args, "workers=2"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task_id"], r["completion_id"]) for r in lines] == [(T1, 0), (T0, 0), (T0, 1), (T0, 2)]
    # report mode (the default): the import is recorded, the outcome is the functional one
    assert [r["outcome"] for r in lines] == ["passed", "failed", "passed", "passed"]
    assert [r["passed"] for r in lines] == [True, False, True, True]
    assert [r["compliant"] for r in lines] == [True, False, True, False]
    assert lines[1]["visible"] is False and lines[1]["hidden"] is False and "properties" not in lines[1]
    assert lines[2]["visible"] is True and lines[2]["hidden"] is True
    assert [v["rule"] for v in lines[3]["violations"]] == ["no-import"] and lines[3]["rule"] is None
    assert lines[0]["key"] == 7 and lines[0]["input_passed"] == "theirs" and lines[0]["passed"] is True
    assert lines[0]["solution"] == by_id[T1].reference and lines[1]["completion"] == "    return True\n"
    failing = [TestResult(**t) for t in lines[1]["tests"]["hidden"]]
    assert failing and failing[0].name == "test_check" and failing[0].status == "failed"
    assert {t["status"] for t in lines[2]["tests"]["visible"]} == {"passed"}
    printed = capsys.readouterr().out
    assert "pass@1               0.8333 (95% CI" in printed and "policy-compliant pass@1 0.6667 (95% CI" in printed
    # enforce mode: the violation is the outcome and the code never runs
    assert main([*args, "gate.mode=enforce"]) == 0
    enforced = json.loads(out.read_text().splitlines()[3])
    assert enforced["outcome"] == "policy_rejected" and enforced["rule"] == "no-import"
    assert "visible" not in enforced or enforced["visible"] is False
    # gate=off admits the import: no violation at all
    assert main([*args, "gate=off"]) == 0
    assert json.loads(out.read_text().splitlines()[3])["compliant"] is True


def test_suites_option_runs_only_the_requested_suites(tmp_path):
    tasks = {t.id: t for t in load_humaneval()}
    rows = [{"task_id": T0, "completion": "    return True\n"}]  # fails both suites
    samples, out = write(tmp_path / "s.jsonl", rows), tmp_path / "out.jsonl"
    args = [f"samples={samples}", f"out={out}", "task_set=humaneval", f"task_set.ids=[{T0}]", "workers=1"]
    assert main([*args, "suites=hidden"]) == 0
    line = json.loads(out.read_text())
    assert line["hidden"] is False and "visible" not in line and line["outcome"] == "failed"
    assert "visible" in tasks[T0].suites  # the task has one; it was not run
    with pytest.raises(UsageError, match="unknown suite"):
        main([*args, "suites=hiden"])


def test_unknown_gate_mode_is_one_line(tmp_path):
    samples = write(tmp_path / "s.jsonl", [{"task_id": T0, "completion": "    return True\n"}])
    args = [f"samples={samples}", f"out={tmp_path / 'o.jsonl'}", "task_set=humaneval", "gate.mode=warn"]
    with pytest.raises((ConfigError, HydraException)) as info:  # Hydra's on a fresh composition, else typed_config's
        main(args)
    assert message(info.value) == "gate.mode='warn' is not allowed; it must be one of enforce, report"
