"""Task kinds behind one interface: the two shipped kinds implement it, and a third kind, added in this file
alone (one class and one registry entry), runs through the job's attempt loop and the gold check unchanged."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from typing import ClassVar

import pytest

from runner.caches.content import Cache
from runner.generation.backends.base import Generation
from runner.generation.extract import Extraction
from runner.job.attempts import AttemptWriter, Experiment
from runner.judging.gold_check import GoldResult
from runner.kinds.base import Bench, TaskKind, verdict_key
from runner.kinds.registry import KINDS, check_references, kind_of, self_contained
from runner.outcome import Outcome, SuiteResult, TestResult, Verdict
from tests.conftest import typed_test_config


@dataclass(frozen=True)
class AnswerTask:
    """The third kind's task: a question whose answer is one exact line (no code, no sandbox)."""

    id: str
    question: str
    answer: str
    kind: ClassVar[str] = "answer"

    def content_hash(self) -> str:
        return hashlib.sha256(f"{self.question}\0{self.answer}".encode()).hexdigest()


class AnswerKind:
    """Judged by comparing the reply's last line with the task's answer."""

    name: ClassVar[str] = "answer"
    self_contained: ClassVar[bool] = False

    def first_messages(self, cfg, task):
        return [{"role": "user", "content": f"{task.id}: {task.question}"}]

    def repair_messages(self, cfg, task, code, feedback):
        return [*self.first_messages(cfg, task), {"role": "user", "content": f"Not {code!r}: {feedback}"}]

    def extract(self, cfg, task, answer):
        lines = answer.strip().splitlines()
        return Extraction(lines[-1].strip() if lines else None)

    def judge(self, task, code, bench):
        passed = code == task.answer
        outcome = Outcome.PASSED if passed else Outcome.FAILED
        test = TestResult("test_answer", "passed" if passed else "failed", "" if passed else "wrong answer")
        return Verdict(outcome=outcome, suites={"visible": SuiteResult("visible", outcome, (test,))})

    def config_key(self, bench):
        return {}

    def verdict_key(self, task, code, bench):
        return verdict_key(task, code, self.config_key(bench), bench.limits_key)

    def gold(self, task, bench):
        return GoldResult(task.id, "ok" if self.judge(task, task.answer, bench).passed else "test_failed")


class Guesser:
    """A backend that answers 41 first, and 42 when told it was wrong."""

    async def generate(self, messages, options):
        text = "I think:\n42" if len(messages) > 1 else "I think:\n41"
        return Generation(text=text, finish_reason="stop", prompt_tokens=3, completion_tokens=2, duration_s=0.0, raw={})


@pytest.fixture
def answer_kind(monkeypatch):
    monkeypatch.setitem(KINDS, "answer", AnswerKind())  # the one registry line a new kind adds


def test_the_shipped_kinds_implement_the_interface():
    assert set(KINDS) == {"function", "repo"}
    for name, kind in KINDS.items():
        assert isinstance(kind, TaskKind) and kind.name == name


def test_a_task_of_no_known_kind_is_named_with_the_kinds_there_are():
    with pytest.raises(ValueError, match=r"task q1: no task kind 'answer'; the kinds are function, repo$"):
        kind_of(AnswerTask("q1", "?", "42"))


def test_a_third_kind_runs_through_the_attempt_loop_and_is_repaired(tmp_path, answer_kind):
    cfg = typed_test_config(["progress=false", "repair.max_repairs=1"])
    bench = Bench(pool=None)
    experiment = Experiment(
        cfg=cfg, backend=Guesser(), model_identity={"model": "guesser"},
        judge=lambda task, code: kind_of(task).judge(task, code, bench),  # as runner.job.run judges
        judge_key=lambda task, code: kind_of(task).verdict_key(task, code, bench),
        cache=Cache(tmp_path / "cache"), writer=AttemptWriter(tmp_path / "attempts.jsonl"),
    )  # fmt: skip
    records = asyncio.run(experiment.run([AnswerTask("q1", "The answer?", "42")]))
    assert [(r.attempt, r.code, r.outcome, r.final) for r in records] == [
        (0, "41", Outcome.FAILED, False),
        (1, "42", Outcome.PASSED, True),
    ]
    assert "Not '41'" in records[1].messages[-1]["content"]  # the kind's own repair prompt
    assert (tmp_path / "attempts.jsonl").read_text().count("\n") == 2


def test_a_third_kind_has_a_gold_check_and_no_self_contained_tools(answer_kind):
    tasks = [AnswerTask("q1", "?", "42"), AnswerTask("q2", "?", "")]
    assert [r.status for r in check_references(tasks, Bench(pool=None))] == ["ok", "ok"]
    assert self_contained(tasks) == []  # re-scoring, the mutation audit and efficiency leave it out
