"""Held-out wrong candidates of the seed-10 tasks: each one is caught, every reference still passes.

Each line of tests/fixtures/seed10_wrong_candidates.jsonl is a realistic solution that passed all
three suites of its task (visible, hidden, properties) until the suites were reviewed against the
domain their prompts state; `misses` names the class of input the solution gets wrong. They are
judged by `runner.evaluate` in the real sandbox (gate in report mode: a candidate with an import is
judged on its behaviour, as under the stdlib gate), beside every such task's reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.evaluate import main
from runner.tasks.loader import load_task_dir

ROOT = Path(__file__).resolve().parents[1]
TASK_DIR = ROOT / "tasks" / "seed10"
FIXTURE = ROOT / "tests" / "fixtures" / "seed10_wrong_candidates.jsonl"


def _candidates() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_fixture_lines_are_complete_and_named_uniquely():
    rows = _candidates()
    assert len(rows) >= 8
    assert all({"task_id", "name", "misses", "solution"} <= set(row) for row in rows)
    assert len({(row["task_id"], row["name"]) for row in rows}) == len(rows)


def test_every_wrong_candidate_is_caught_and_every_reference_passes(tmp_path):
    pytest.importorskip("runner.sandbox.workers.pool")
    wrong = _candidates()
    tasks = {t.id: t for t in load_task_dir(TASK_DIR)}
    references = [
        {"task_id": tid, "name": "reference", "solution": tasks[tid].reference}
        for tid in sorted({r["task_id"] for r in wrong})
    ]
    samples, out = tmp_path / "samples.jsonl", tmp_path / "results.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in [*references, *wrong]), encoding="utf-8")
    args = [f"samples={samples}", f"out={out}", f"task_set.path={TASK_DIR}", "task_set.name=seed10", "tracking=off"]
    assert main([*args, "workers=2"]) == 0
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for row in results[: len(references)]:
        assert row["outcome"] == "passed", f"the reference of {row['task_id']} fails: {row['tests']}"
    let_through = [f"{r['task_id']}/{r['name']} ({r['misses']})" for r in results[len(references) :] if r["passed"]]
    assert not let_through, "wrong candidates the suites let through: " + "; ".join(let_through)
    for row in results[len(references) :]:
        assert row["outcome"] == "failed", (row["name"], row["outcome"], row["detail"])
