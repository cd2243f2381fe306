"""Attempt records: the outcome is an Outcome in memory and its value in attempts.jsonl."""

import json

import pytest

from runner.outcome import Outcome
from runner.records import AttemptRecord, read_attempts


def record(outcome) -> AttemptRecord:
    return AttemptRecord(task_id="t", sample=0, attempt=0, seed=1, model="m", messages=[], options={},
                         response="", code=None, outcome=outcome, final=True)  # fmt: skip


def test_outcome_is_the_enum_in_memory_and_its_value_on_disk(tmp_path):
    assert record("passed").outcome is Outcome.PASSED and record(Outcome.FAILED).outcome is Outcome.FAILED
    line = record(Outcome.TIMEOUT).to_json()
    assert json.loads(line)["outcome"] == "timeout"
    (tmp_path / "attempts.jsonl").write_text(line + "\n" + line[:20])  # a torn last line is skipped
    (back,) = read_attempts(tmp_path / "attempts.jsonl")
    assert back.outcome is Outcome.TIMEOUT and back == record(Outcome.TIMEOUT)


def test_an_unknown_outcome_names_its_line(tmp_path):
    path = tmp_path / "attempts.jsonl"
    path.write_text(record("passed").to_json() + "\n" + record("passed").to_json().replace('"passed"', '"warned"'))
    with pytest.raises(ValueError, match=r"attempts.jsonl:2: 'warned' is not a valid Outcome"):
        read_attempts(path)
