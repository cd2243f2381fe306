"""Prompt messages from the templates in config (`conf/prompts/`).

The repair prompt carries the original specification, the previous code and feedback built by the
judge from the visible suite only (see judging.judge.feedback_for_repair).
"""

from __future__ import annotations

import re

from runner.tasks.model import Task

_PLACEHOLDER = re.compile(r"\{(prompt|signature|entry_point|code|feedback)\}")


def render(template: str, **values: str) -> str:
    """Fill `{name}` placeholders in one pass; braces in code or prompts are left alone."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _task_values(task: Task) -> dict[str, str]:
    signature = task.signature or f"def {task.entry_point}(...)"
    return {"prompt": task.prompt.strip(), "signature": signature, "entry_point": task.entry_point}


def first_messages(prompts, task: Task) -> list[dict[str, str]]:
    """Messages for a task's first attempt."""
    return [
        {"role": "system", "content": prompts.system},
        {"role": "user", "content": render(prompts.task, **_task_values(task))},
    ]


def repair_messages(prompts, task: Task, code: str, feedback: str) -> list[dict[str, str]]:
    """Messages for a repair attempt: the specification, the previous code and visible-only feedback."""
    values = {**_task_values(task), "code": code.strip(), "feedback": feedback.strip()}
    return [
        {"role": "system", "content": prompts.system},
        {"role": "user", "content": render(prompts.repair, **values)},
    ]
