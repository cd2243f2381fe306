"""Prompt sets (conf/prompts/): published, evalplus (pre-filled answer) and completion (prompt continued)."""

from runner.generation.extract import extract
from runner.generation.prompts import answer_prefix, answer_text, first_messages, repair_messages
from runner.tasks.model import Task
from tests.conftest import compose_config

PROMPT = 'def add(a: int, b: int) -> int:\n    """Return a + b.\n    >>> add(1, 2)\n    3\n    """\n'
TASK = Task(
    "HumanEval/x",
    "add",
    PROMPT,
    PROMPT + "    return a + b\n",
    {"hidden": "def test_h():\n    assert add(1, 2) == 3\n"},
)
EVALPLUS_INSTRUCTION = (
    "Please provide a self-contained Python script that solves the following problem in a markdown code block:"
)
EVALPLUS_RESPONSE = (
    "Below is a Python script with a self-contained function that solves the problem and passes corresponding tests:"
)


def test_published_set_is_unchanged_system_and_user():
    messages = first_messages(compose_config([]).prompts, TASK)
    assert [m["role"] for m in messages] == ["system", "user"] and answer_prefix(messages) == ""
    assert "no\nimports" in messages[0]["content"] or "no imports" in messages[0]["content"].replace("\n", " ")


def test_evalplus_set_is_evalplus_codegen_prompt_with_prefilled_fence():
    prompts = compose_config(["prompts=evalplus"]).prompts
    messages = first_messages(prompts, TASK)
    assert messages == [
        {"role": "user", "content": f"{EVALPLUS_INSTRUCTION}\n```\n{PROMPT.strip()}\n```\n"},
        {"role": "assistant", "content": f"{EVALPLUS_RESPONSE}\n```python\n"},
    ]
    continuation = "def add(a: int, b: int) -> int:\n    return a + b\n```\n"
    assert (
        extract(answer_text(messages, continuation), "add").code
        == "def add(a: int, b: int) -> int:\n    return a + b\n"
    )
    repair = repair_messages(prompts, TASK, "def add(a, b):\n    return 0", "Visible tests: failed.")
    assert repair[-1] == messages[-1] and "Visible tests: failed." in repair[0]["content"]


def test_completion_set_continues_the_raw_prompt_until_a_stop_sequence():
    cfg = compose_config(["task_set=humaneval", "prompts=completion"])
    messages = first_messages(cfg.prompts, TASK)
    assert messages[-1] == {"role": "assistant", "content": PROMPT}
    assert {"\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#"} <= set(cfg.prompts.stop)
    found = extract(answer_text(messages, "    return a + b\n"), "add")
    assert found.code == PROMPT + "    return a + b\n" and found.changes == ()


def test_answer_text_does_not_double_an_echoed_prefix():
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "```python\n"}]
    assert answer_text(messages, "x = 1\n```") == "```python\nx = 1\n```"
    assert answer_text(messages, "```python\nx = 1\n```") == "```python\nx = 1\n```"
    assert answer_text(messages[:1], "text") == "text"
