"""Prompt messages for repo tasks: the issue, the shown files in full, and the answer format asked for.

The templates come from the prompt set (`repo_system`, `repo_task`, `repo_repair`; empty = the defaults
here). Placeholders: {problem_statement} {shown_files} {answer_format} and, in repairs, {code} (the
previous answer) and {feedback} (visible tests only, see judging.judge.feedback_for_repair).
"""

from __future__ import annotations

import json
import re

from runner.config import PromptsConfig
from runner.tasks.repo_task import RepoTask

SYSTEM = "You are a careful Python engineer. You change an existing project to resolve an issue, and nothing else."
TASK = """Resolve this issue in the repository below.

Issue:
{problem_statement}

Files of the repository (paths relative to its root):

{shown_files}

{answer_format}"""
REPAIR = """{task}

Your previous answer:
{code}

It was not accepted. Feedback:
{feedback}

Answer again, in the same format, with a complete answer."""
ANSWER_FORMATS = {
    "diff": "Answer with one unified diff, as `git diff` prints it (paths a/<path> and b/<path>, relative to the "
    "repository root), in a ```diff code block. Do not change the tests.",
    "files": "Answer with the complete new content of every file you change: for each file, a line "
    "`File: <path>` and then the whole file in one code block. Do not change the tests.",
}
_PLACEHOLDER = re.compile(r"\{(problem_statement|shown_files|answer_format|task|code|feedback)\}")


def _render(template: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def shown_files(task: RepoTask) -> str:
    """Each shown file as `File: <path>` and its content in a fence."""
    parts = []
    for path in task.shown_files:
        text = task.files[path].decode("utf-8", "replace")
        parts.append(f"File: {path}\n```{'python' if path.endswith('.py') else ''}\n{text.rstrip()}\n```")
    return "\n\n".join(parts)


def shown_answer(answer: str, mode: str) -> str:
    """A previous answer as the model wrote it: the diff in a fence, or each whole file under its name."""
    if mode != "files" or not answer:
        return f"```diff\n{answer.strip()}\n```" if answer else "(no answer was found)"
    files = json.loads(answer)
    return "\n\n".join(f"File: {path}\n```\n{text.rstrip()}\n```" for path, text in files.items())


def _values(task: RepoTask, mode: str) -> dict[str, str]:
    return {"problem_statement": task.problem_statement.strip(), "shown_files": shown_files(task),
            "answer_format": ANSWER_FORMATS[mode]}  # fmt: skip


def _messages(prompts: PromptsConfig, user: str) -> list[dict[str, str]]:
    system = prompts.repo_system or SYSTEM
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def repo_first_messages(prompts: PromptsConfig, task: RepoTask, mode: str) -> list[dict[str, str]]:
    """Messages for a repo task's first attempt."""
    return _messages(prompts, _render(prompts.repo_task or TASK, _values(task, mode)))


def repo_repair_messages(prompts: PromptsConfig, task: RepoTask, mode: str, answer: str, feedback: str) -> list[dict]:
    """Messages for a repair: the task again, the previous answer and visible-only feedback."""
    values = _values(task, mode)
    values["task"] = _render(prompts.repo_task or TASK, values)
    values["code"] = shown_answer(answer, mode)
    values["feedback"] = feedback.strip()
    return _messages(prompts, _render(prompts.repo_repair or REPAIR, values))
