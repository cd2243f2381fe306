"""Prompt messages from the templates in config (`conf/prompts/`).

The repair prompt carries the original specification, the previous code and feedback built by the
judge from the visible suite only (see judging.judge.feedback_for_repair).

A prompt set with a `prefix` pre-fills the start of the answer: the messages end with an assistant
message holding it, which the backends send as the turn the model continues. `answer_text` puts the
prefix back in front of the continuation for extraction (some servers echo it, some do not).
"""

from __future__ import annotations

import re

from runner.config import PromptsConfig
from runner.tasks.model import Task

_PLACEHOLDER = re.compile(r"\{(prompt|raw_prompt|signature|entry_point|code|feedback)\}")


def render(template: str, **values: str) -> str:
    """Fill `{name}` placeholders in one pass; braces in code or prompts are left alone."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _task_values(task: Task) -> dict[str, str]:
    signature = task.signature or f"def {task.entry_point}(...)"
    return {"prompt": task.prompt.strip(), "raw_prompt": task.prompt, "signature": signature,
            "entry_point": task.entry_point}  # fmt: skip


def _messages(prompts: PromptsConfig, user: str, values: dict[str, str]) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": prompts.system}] if prompts.system else []
    messages.append({"role": "user", "content": render(user, **values)})
    prefix = render(prompts.prefix, **values)
    if prefix:
        messages.append({"role": "assistant", "content": prefix})
    return messages


def first_messages(prompts: PromptsConfig, task: Task) -> list[dict[str, str]]:
    """Messages for a task's first attempt (ending with the pre-filled answer start, if the set has one)."""
    return _messages(prompts, prompts.task, _task_values(task))


def repair_messages(prompts: PromptsConfig, task: Task, code: str, feedback: str) -> list[dict[str, str]]:
    """Messages for a repair attempt: the specification, the previous code and visible-only feedback."""
    values = {**_task_values(task), "code": code.strip(), "feedback": feedback.strip()}
    return _messages(prompts, prompts.repair, values)


def answer_prefix(messages: list[dict[str, str]]) -> str:
    """The pre-filled start of the answer: the content of a trailing assistant message, else ""."""
    return messages[-1]["content"] if messages and messages[-1]["role"] == "assistant" else ""


def answer_text(messages: list[dict[str, str]], continuation: str) -> str:
    """The whole answer: the pre-filled prefix and the model's continuation (a server that echoes
    the prefix, like llama.cpp's, is not given it twice)."""
    prefix = answer_prefix(messages)
    return continuation if continuation.startswith(prefix) else prefix + continuation
