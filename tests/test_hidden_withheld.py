"""Hidden and property suites never reach a prompt: not their names, inputs or messages.

A marker string is planted in the hidden and properties suites (test names, inputs, assertion
messages); a run with the real judge and sandbox and a generous repair budget must never show it to
the model in any message of any attempt.
"""

import asyncio

from runner.caches.content import Cache, content_key
from runner.generation.backends.base import Generation
from runner.job.attempts import AttemptWriter, Experiment
from runner.judging.judge import judge
from runner.sandbox.workers.pool import Limits, WorkerPool
from runner.tasks.model import Task
from tests.conftest import typed_test_config

MARKER = "ZQXJ_SECRET_7731"

HIDDEN = f'''
def test_{MARKER}_boundary():
    value = "{MARKER}"
    assert double(len(value)) == 2 * len(value), "{MARKER} message"

def test_{MARKER}_negative():
    assert double(-3) == -6, "{MARKER} negative"
'''
PROPERTIES = f'''
@given(st.integers(-1000, 1000))
def test_{MARKER}_property(x):
    assert double(x) == reference.double(x), "{MARKER} property"
'''

TASK = Task(
    id="double",
    entry_point="double",
    signature="def double(x: int) -> int",
    prompt="Return twice x.",
    reference="def double(x):\n    return 2 * x\n",
    suites={"visible": "def test_small():\n    assert double(2) == 4\n", "hidden": HIDDEN, "properties": PROPERTIES},
)


class RecordingBackend:
    """Answers from a script, in order, and keeps every message list it was sent."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.sent: list[list[dict]] = []

    async def generate(self, messages, options):
        self.sent.append(messages)
        text = self.answers[len(self.sent) - 1]
        return Generation(text=text, finish_reason="stop", prompt_tokens=1, completion_tokens=1, duration_s=0.0, raw={})


def _run(tmp_path, answers, budget):
    cfg = typed_test_config(["progress=false", f"repair.max_repairs={budget}"])
    backend = RecordingBackend(answers)
    with WorkerPool(1, Limits(timeout_s=20, cpu_s=20)) as pool:
        experiment = Experiment(
            cfg=cfg, backend=backend, model_identity={"model": "scripted"},
            judge=lambda task, code: judge(task, code, pool, cfg.gate),
            judge_key=lambda task, code: content_key(task.content_hash(), code),
            cache=Cache(tmp_path / "cache"), writer=AttemptWriter(tmp_path / "attempts.jsonl"),
        )  # fmt: skip
        records = asyncio.run(experiment.run([TASK]))
    return backend, records


def test_marker_never_reaches_any_prompt(tmp_path):
    answers = [
        "```python\ndef double(x):\n    return x + 1\n```",  # fails visible: repaired
        "```python\ndef double(x)\n    return x\n```",  # syntax error: repaired
        "```python\ndef double(x):\n    return abs(x) * 2 if x > -1000 else 0\n```",  # hidden fails only
    ]
    backend, records = _run(tmp_path, answers, budget=5)
    outcomes = [r.outcome for r in records]
    assert outcomes == ["failed", "syntax_error", "failed"]
    # the last attempt failed the hidden and properties suites with the marker in their messages ...
    assert records[-1].suites == {"visible": True, "hidden": False, "properties": False}
    assert MARKER in str(records[-1].tests["hidden"]) and MARKER in str(records[-1].tests["properties"])
    # ... yet no repair followed (that alone would tell the model hidden tests failed), and no prompt shows it
    assert records[-1].final and len(backend.sent) == 3
    prompts = "\n".join(m["content"] for messages in backend.sent for m in messages)
    assert MARKER not in prompts
    assert MARKER not in "\n".join(m["content"] for r in records for m in r.messages)
    assert "test_small" in backend.sent[1][-1]["content"]  # the visible failure did reach the repair prompt
