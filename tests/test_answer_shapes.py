"""Real answers of Qwen2.5-Coder-Instruct in the shapes script-style answers take, and what each becomes.

The fixture (tests/fixtures/answer_shapes.jsonl, made by scripts/record_answer_shapes.py from real jobs with
`prompts=evalplus`) holds attempts.jsonl lines: the request, the model's response, the module that was judged
and its verdict, plus the answer's `shape`. Each answer must still sanitize to that module, and a job replaying
the answers must judge each one as recorded.
"""

import json
from pathlib import Path

import pytest

from runner.generation.extract import extract
from runner.generation.prompts import answer_text
from runner.generation.sanitize import NOTE_PREFIX, sanitized
from runner.job.run import run_job
from runner.records import AttemptRecord, read_attempts
from scripts.record_answer_shapes import shapes
from tests.conftest import datasets_available, typed_test_config

FIXTURE = Path(__file__).parent / "fixtures" / "answer_shapes.jsonl"
ROWS = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
SCRIPT_AROUND_THE_FUNCTION = {"self_test_asserts", "example_prints", "main_guard", "test_function"}


def test_the_fixture_holds_every_shape_of_a_script_style_answer_and_both_verdicts():
    found = {row["shape"] for row in ROWS}
    # No `if __name__` block and no second fenced block occurred in the 220 real answers this was made from
    # (Qwen2.5-Coder-0.5B on HumanEval+ with and without the stop strings, 1.5B on 16 tasks without): those
    # shapes are covered by tests/test_sanitize.py and tests/test_extract.py with written examples.
    assert found >= {"self_test_asserts", "example_prints", "test_function", "helper_after_caller", "cut_off"}
    assert {row["outcome"] for row in ROWS} >= {"passed", "failed"}
    assert all(row["model"].startswith("qwen25_coder") for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['shape']}-{r['task_id']}" for r in ROWS])
def test_each_answer_has_its_shape_and_sanitizes_to_the_module_that_was_judged(row):
    record = AttemptRecord.from_dict(row)
    assert row["shape"] in shapes(record)
    entry = row["entry_point"]
    extraction = sanitized(extract(answer_text(record.messages, record.response), entry), (entry,))
    assert extraction.code == row["code"]
    assert list(extraction.changes) == row["extraction"]
    dropped = any(note.startswith(NOTE_PREFIX) for note in extraction.changes)
    if row["shape"] in SCRIPT_AROUND_THE_FUNCTION:  # sanitizing dropped it, and said so
        assert dropped
    elif row["shape"] == "clean":
        assert not dropped


@pytest.mark.skipif(not datasets_available(), reason="benchmark files absent (RUNNER_DATASETS_DIR)")
def test_a_job_replaying_the_answers_judges_each_one_as_recorded(tmp_path):
    ids = ",".join(sorted({row["task_id"] for row in ROWS}))
    cfg = typed_test_config([
        "task_set=humanevalplus", f"task_set.ids=[{ids}]", "backend=replay", f"backend.replay_file={FIXTURE}",
        "repair=none", "progress=false", "tracking.enabled=false", f"cache_dir={tmp_path}/cache",
    ])  # fmt: skip
    run_job(cfg, tmp_path / "job")
    judged = {(r.task_id, r.code, r.outcome.value) for r in read_attempts(tmp_path / "job" / "attempts.jsonl")}
    assert judged == {(row["task_id"], row["code"], row["outcome"]) for row in ROWS}
