"""The experiment loop with a scripted backend and judge: repair, backend errors, cache and resume."""

import asyncio
import gc
import json

import pytest

from runner.caches.content import Cache, content_key
from runner.generation.backends.base import BackendError, Generation
from runner.job.attempts import AttemptWriter, Experiment, sample_seed
from runner.outcome import Outcome, SuiteResult, TestResult, Verdict
from runner.records import read_attempts
from runner.tasks.model import Task
from tests.conftest import typed_test_config

GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "```python\ndef add(a, b):\n    return a - b\n```"


def _task(task_id: str) -> Task:
    suites = {"visible": "def test_v():\n    assert add(1, 2) == 3\n"}
    reference = "def add(a, b):\n    return a + b\n"
    return Task(id=task_id, entry_point="add", prompt="Add.", reference=reference, suites=suites)


class ScriptedBackend:
    """Answers BAD to first attempts of tasks named 'fix*', GOOD otherwise; can crash after N calls."""

    def __init__(self, crash_after: int | None = None, fail_tasks: tuple[str, ...] = ()) -> None:
        self.calls: list[list[dict]] = []
        self.crash_after, self.fail_tasks = crash_after, fail_tasks

    async def generate(self, messages, options):
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise KeyboardInterrupt("simulated kill")
        self.calls.append(messages)
        text = messages[-1]["content"]
        if any(f"task {t}" in text for t in self.fail_tasks):
            raise BackendError("server_error", "boom", transient=True)
        first = "Your previous implementation" not in text
        return Generation(text=BAD if first and "fix" in text else GOOD, finish_reason="stop",
                          prompt_tokens=10, completion_tokens=5, duration_s=0.01, raw={})  # fmt: skip


def fake_judge(task, code):
    passed = code is not None and "a + b" in code
    outcome = Outcome.PASSED if passed else Outcome.FAILED
    tests = (TestResult("test_v", "passed" if passed else "failed", "" if passed else "assert -1 == 3"),)
    return Verdict(outcome=outcome, suites={"visible": SuiteResult("visible", outcome, tests)}, duration_s=0.02)


def _experiment(tmp_path, backend, out="attempts.jsonl", overrides=(), judge=fake_judge, on_progress=None):
    cfg = typed_test_config(["progress=false", *overrides])
    return Experiment(cfg=cfg, backend=backend, model_identity={"model": "fake"}, judge=judge,
                      judge_key=lambda t, c: content_key(t.id, c), cache=Cache(tmp_path / "cache"),
                      writer=AttemptWriter(tmp_path / out), on_progress=on_progress)  # fmt: skip


def _tasks():
    # The prompt text carries the task id so the scripted backend can tell tasks apart.
    return [Task(**{**_task(t).__dict__, "prompt": f"task {t}"}) for t in ("fix_me", "ok_one", "ok_two")]


def test_repair_follows_a_failed_first_attempt(tmp_path):
    backend = ScriptedBackend()
    records = asyncio.run(_experiment(tmp_path, backend).run(_tasks()))
    by_task = {(r.task_id, r.attempt): r for r in records}
    assert by_task[("fix_me", 0)].outcome == "failed" and not by_task[("fix_me", 0)].final
    assert by_task[("fix_me", 1)].outcome == "passed" and by_task[("fix_me", 1)].final
    assert by_task[("ok_one", 0)].final and ("ok_one", 1) not in by_task
    assert "Your previous implementation" in by_task[("fix_me", 1)].messages[-1]["content"]
    assert len(backend.calls) == 4
    assert [r.task_id for r in read_attempts(tmp_path / "attempts.jsonl")].count("fix_me") == 2


def test_zero_repair_budget_makes_one_attempt(tmp_path):
    records = asyncio.run(_experiment(tmp_path, ScriptedBackend(), overrides=["repair=none"]).run(_tasks()))
    assert [(r.task_id, r.attempt, r.final) for r in records if r.task_id == "fix_me"] == [("fix_me", 0, True)]


def test_backend_failure_is_recorded_unscored_and_not_repaired(tmp_path):
    records = asyncio.run(_experiment(tmp_path, ScriptedBackend(fail_tasks=("ok_two",))).run(_tasks()))
    failed = [r for r in records if r.task_id == "ok_two"]
    assert [(r.outcome, r.final) for r in failed] == [("backend_error", True)]
    assert "boom" in failed[0].detail


def test_killed_run_resumes_without_regenerating_and_gives_identical_records(tmp_path):
    reference_dir = tmp_path / "reference"
    reference_dir.mkdir()
    complete = asyncio.run(_experiment(reference_dir, ScriptedBackend()).run(_tasks()))

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(_experiment(tmp_path, ScriptedBackend(crash_after=2), out="killed.jsonl").run(_tasks()))
    # The killed run's task is left with an exception nobody retrieved; its finalizer logs a traceback, and
    # CPython 3.11 builds one with ast.parse: run by the garbage collector inside a later test's ast.parse,
    # it fails that one with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
    gc.collect()
    resumed_backend = ScriptedBackend()
    resumed = asyncio.run(_experiment(tmp_path, resumed_backend, out="resumed.jsonl").run(_tasks()))
    assert len(resumed_backend.calls) == 2  # only the two generations the killed run never finished
    assert [r.to_json() for r in resumed] == [r.to_json() for r in complete]

    again_backend = ScriptedBackend()
    again = asyncio.run(_experiment(tmp_path, again_backend, out="again.jsonl").run(_tasks()))
    assert again_backend.calls == [] and [r.to_json() for r in again] == [r.to_json() for r in complete]
    lines = [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert len(lines) == len(complete)


def test_sample_seeds_start_at_the_job_seed_and_differ():
    assert sample_seed(42, 0) == 42
    seeds = {sample_seed(42, i) for i in range(50)}
    assert len(seeds) == 50 and sample_seed(1, 3) != sample_seed(2, 3)


class PrefillBackend:
    """Continues a pre-filled answer the way a model given EvalPlus's prompt does: a language line first."""

    def __init__(self) -> None:
        self.calls: list[list[dict]] = []

    async def generate(self, messages, options):
        self.calls.append(messages)
        return Generation(text="```\npython\ndef add(a, b):\n    return a + b\n```", finish_reason="stop",
                          prompt_tokens=10, completion_tokens=5, duration_s=0.01, raw={})  # fmt: skip


def test_prompt_set_prefix_is_sent_and_extraction_changes_are_recorded(tmp_path):
    backend = PrefillBackend()
    records = asyncio.run(_experiment(tmp_path, backend, overrides=["prompts=evalplus"]).run(_tasks()[:1]))
    assert backend.calls[0][-1]["role"] == "assistant" and backend.calls[0][-1]["content"].endswith("```python\n")
    (record,) = records
    assert record.outcome == "passed" and record.code == "def add(a, b):\n    return a + b\n"
    assert record.extraction == ["dropped the line 'python' after the opening fence: a language name, not code"]
    assert read_attempts(tmp_path / "attempts.jsonl")[0].extraction == record.extraction


def test_prompt_set_stop_sequences_reach_the_backend(tmp_path):
    experiment = _experiment(tmp_path, ScriptedBackend(), overrides=["prompts=completion"])
    assert "\ndef " in experiment._options(0).stop


def test_repair_feedback_is_bounded_by_feedback_max_chars(tmp_path):
    def long_failure(task, code):
        verdict = fake_judge(task, code)
        if verdict.passed:
            return verdict
        tests = tuple(TestResult(f"test_{i}", "failed", "assert " + "x" * 250) for i in range(40))
        return Verdict(Outcome.FAILED, suites={"visible": SuiteResult("visible", Outcome.FAILED, tests)})

    for limit in (150, 100_000):
        backend = ScriptedBackend()
        overrides = (f"repair.feedback_max_chars={limit}",)
        asyncio.run(_experiment(tmp_path / str(limit), backend, overrides=overrides, judge=long_failure).run(_tasks()))
        repair = next(m[-1]["content"] for m in backend.calls if "Your previous implementation" in m[-1]["content"])
        feedback = repair.split("Validation feedback:\n")[1].split("\n\nReturn a complete")[0]
        assert feedback.startswith("Visible tests: failed.\n- test_0 failed")
        assert len(feedback) <= limit
        assert feedback.endswith("...") == (limit == 150) and ("test_39 failed" in feedback) == (limit > 150)


def test_progress_callback_sees_every_sample(tmp_path):
    seen = []
    asyncio.run(_experiment(tmp_path, ScriptedBackend(), on_progress=lambda *a: seen.append(a)).run(_tasks()))
    assert sorted(seen) == [(1, 1, 3), (2, 2, 3), (3, 3, 3)]
