"""A repo task's hidden tests never reach a prompt: not their node ids, their file, or their messages.

As tests/test_hidden_withheld.py does for function tasks: a marker is planted in the hidden test file's
name, its test names and its assertion messages; a run with the real judge, sandbox and environment and
a generous repair budget must never show it to the model.
"""

import asyncio

from runner.caches.content import Cache, content_key
from runner.job.attempts import AttemptWriter, Experiment
from runner.repo.run_answer import judge_repo
from runner.sandbox.workers.pool import Limits, WorkerPool
from runner.tasks.repo_task import RepoTask
from tests.conftest import typed_test_config
from tests.repo_fixtures import environments, slug_patch
from tests.test_hidden_withheld import RecordingBackend

MARKER = "ZQXJ_SECRET_7731"
SLUG = b'"""URL slugs."""\n\n\ndef slugify(text: str) -> str:\n    """Lower-case words joined by single hyphens."""\n'
VISIBLE = b"from textkit.slug import slugify\n\n\ndef test_ascii():\n"
VISIBLE += b'    assert slugify("Hello World") == "hello-world"\n'
HIDDEN = f'''from textkit.slug import slugify


def test_{MARKER}_tabs():
    assert slugify("a\\tb") == "a-b", "{MARKER} tabs"
'''.encode()
TASK = RepoTask(
    id="slug_hidden",
    problem_statement="slugify should join words with single hyphens, whatever the whitespace between them.",
    shown_files=("textkit/slug.py",),
    fail_to_pass=(f"tests/test_{MARKER}.py::test_{MARKER}_tabs",),
    pass_to_pass=("tests/test_visible.py::test_ascii",),
    visible_tests=("tests/test_visible.py::test_ascii",),
    files={
        "textkit/__init__.py": b"",
        "textkit/slug.py": SLUG + b'    return "-".join(text.lower().split(" "))\n',
        "tests/test_visible.py": VISIBLE,
        f"tests/test_{MARKER}.py": HIDDEN,
    },  # fmt: skip
    gold_patch=slug_patch(""),
)


def test_hidden_repo_tests_never_reach_any_prompt(tmp_path):
    answers = [
        f"```diff\n{slug_patch('', '    return text')}```",  # fails the visible test: repaired
        "I think the code is fine.",  # no diff: patch_failed, repaired
        f"```diff\n{slug_patch('', '    return text.lower().replace(chr(32), chr(45))')}```",  # hidden fails only
    ]
    cfg = typed_test_config(["progress=false", "repair.max_repairs=6"])
    backend = RecordingBackend(answers)
    envs = environments()
    with WorkerPool(1, Limits(timeout_s=30, cpu_s=30)) as pool:
        experiment = Experiment(
            cfg=cfg, backend=backend, model_identity={"model": "scripted"},
            judge=lambda task, code: judge_repo(task, code, pool, envs, "diff", 30.0),
            judge_key=lambda task, code: content_key(task.content_hash(), code),
            cache=Cache(tmp_path / "cache"), writer=AttemptWriter(tmp_path / "attempts.jsonl"),
        )  # fmt: skip
        records = asyncio.run(experiment.run([TASK]))
    assert [r.outcome for r in records] == ["failed", "patch_failed", "failed"]
    # the last attempt failed the hidden test, with the marker in its result ...
    assert records[-1].suites == {"visible": True, "hidden": False}
    assert MARKER in str(records[-1].tests["hidden"])
    # ... yet no repair followed, and no prompt ever showed the marker
    assert records[-1].final and len(backend.sent) == 3
    prompts = "\n".join(m["content"] for messages in backend.sent for m in messages)
    assert MARKER not in prompts
    assert "test_ascii" in backend.sent[1][-1]["content"]  # the visible failure did reach the repair prompt
    assert "textkit/slug.py" in backend.sent[0][-1]["content"]
