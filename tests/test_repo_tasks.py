"""Repo tasks without the sandbox: loading (one-line errors), answers found in replies, patches applied."""

import json
import shutil

import pytest
import yaml

from runner.outcome import Outcome
from runner.repo.extract import extract_answer
from runner.repo.patch import apply_answer
from runner.tasks.loader import TaskError, load_task_dir
from tests.repo_fixtures import copy_set, fixture_tasks, slug_patch


def test_a_mixed_task_set_loads_both_kinds():
    tasks = fixture_tasks()
    assert {t.id: t.kind for t in tasks.values()} == {"double": "function", "slug_spaces": "repo", "span_dict": "repo"}
    slug = tasks["slug_spaces"]
    assert slug.suites == {"visible": ("tests/test_slug.py::test_repeated_spaces", "tests/test_slug.py::test_ascii"),
                           "hidden": ("tests/test_slug.py::test_tabs_and_newlines",)}  # fmt: skip
    assert tasks["span_dict"].visible_tests == tasks["span_dict"].pass_to_pass  # the default


def test_the_content_hash_covers_every_file(tmp_path):
    root = copy_set(tmp_path)
    before = {t.id: t.content_hash() for t in load_task_dir(root)}
    (root / "slug_spaces" / "repo" / "tests" / "test_slug.py").write_text("# changed\n", encoding="utf-8")
    after = {t.id: t.content_hash() for t in load_task_dir(root)}
    assert after["slug_spaces"] != before["slug_spaces"] and after["span_dict"] == before["span_dict"]


def _edit(root, key, value):
    path = root / "slug_spaces" / "task.yaml"
    data = yaml.safe_load(path.read_text())
    data.pop(key, None)
    if value is not None:
        data[key] = yaml.safe_load(value)
    path.write_text(yaml.safe_dump(data))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("shown_files", "[textkit/nope.py]", r"field `shown_files`: 'textkit/nope.py' is not a file under repo/"),
        ("fail_to_pass", "[tests/test_nope.py::test_x]", r"'tests/test_nope.py' is not a file under repo/"),
        ("fail_to_pass", "[tests/test_slug.py]", r"is not a pytest node id"),
        ("requirements", "[dirty-equals]", r"field `requirements`: 'dirty-equals' is not pinned; write it as name"),
        ("visible_tests", "[tests/test_slug.py::test_other]", r"is in neither fail_to_pass nor pass_to_pass"),
        ("id", "other", r"is 'other' but the directory is 'slug_spaces'"),
        ("kind", "function", r"field `kind`: is 'function'"),
        ("shown_file", "[a]", r"field `shown_file`: unknown field"),
        ("fail_to_pass", None, r"field `fail_to_pass`: missing required field"),
    ],
)
def test_a_bad_repo_task_is_one_line_that_says_what_to_change(tmp_path, key, value, message):
    root = copy_set(tmp_path)
    _edit(root, key, value)
    with pytest.raises(TaskError, match=message) as caught:
        load_task_dir(root)
    assert "\n" not in str(caught.value) and "slug_spaces" in str(caught.value)


def test_a_missing_gold_patch_or_repo_is_a_task_error(tmp_path):
    root = copy_set(tmp_path)
    (root / "slug_spaces" / "gold.patch").unlink()
    with pytest.raises(TaskError, match=r"gold\.patch: is missing or empty"):
        load_task_dir(root)
    shutil.rmtree(root / "span_dict" / "repo")
    (root / "slug_spaces" / "gold.patch").write_text("x")
    with pytest.raises(TaskError, match=r"span_dict/repo: is missing"):
        load_task_dir(root)


def test_a_symlink_in_repo_is_a_task_error(tmp_path):
    root = copy_set(tmp_path)
    (root / "slug_spaces" / "repo" / "link.py").symlink_to("/etc/passwd")
    with pytest.raises(TaskError, match=r"link\.py: is a symlink"):
        load_task_dir(root)


DIFF = slug_patch("")


@pytest.mark.parametrize(
    "reply",
    [f"Here:\n```diff\n{DIFF}```\nDone.", f"```patch\n{DIFF}```", f"The fix:\n\n{DIFF}", f"```\n{DIFF}\n```"],
)
def test_a_diff_is_found_fenced_or_not(reply):
    assert extract_answer(reply, "diff").code.strip() == DIFF.strip()


def test_no_diff_is_no_answer_and_patch_failed():
    slug = fixture_tasks()["slug_spaces"]
    assert extract_answer("```python\nprint(1)\n```", "diff").code is None
    assert apply_answer(slug, None).outcome is Outcome.PATCH_FAILED


def test_whole_files_are_found_by_the_name_before_them():
    reply = "File: textkit/slug.py\n```python\nX = 1\n```\n\n### `textkit/more.py`\n```\nY = 2\n```\n"
    found = json.loads(extract_answer(reply, "files").code)
    assert found == {"textkit/slug.py": "X = 1\n", "textkit/more.py": "Y = 2\n"}
    unnamed = extract_answer("```python\nZ = 3\n```", "files", ("textkit/slug.py",))
    assert json.loads(unnamed.code) == {"textkit/slug.py": "Z = 3\n"} and unnamed.changes


def test_the_gold_patch_applies_and_changes_one_file():
    slug = fixture_tasks()["slug_spaces"]
    applied = apply_answer(slug, slug.gold_patch)
    assert applied.outcome is None and applied.changed == ("textkit/slug.py",)
    assert b"split())" in applied.files["textkit/slug.py"]


def _tests_patch(path: str, new: bool) -> str:
    if new:
        head = f"diff --git a/{path} b/{path}\nnew file mode 100644\n"
        return head + f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+X = 1\n"
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,4 @@\n from textkit.slug import slugify\n"
            "+slugify = lambda text: 'a-b-c'\n \n \n")  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "outcome", "says"),
    [
        ("not a diff at all\n", Outcome.PATCH_FAILED, "does not apply"),
        (DIFF.replace('split(" ")', 'split("x")'), Outcome.PATCH_FAILED, "does not apply"),
        (_tests_patch("tests/test_slug.py", new=False), Outcome.PATCH_FORBIDDEN, "protected path tests/"),
        (_tests_patch("conftest.py", new=True), Outcome.PATCH_FORBIDDEN, "conftest.py is test configuration"),
        (_tests_patch("textkit/conftest.py", new=True), Outcome.PATCH_FORBIDDEN, "conftest.py is test configuration"),
        (_tests_patch("pytest.ini", new=True), Outcome.PATCH_FORBIDDEN, "pytest.ini is test configuration"),
        (
            "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n@@ -0,0 +1 @@\n+/etc/shadow\n"
            "\\ No newline at end of file\n",
            Outcome.PATCH_FORBIDDEN,
            "symlink",
        ),
        ("--- a/../outside.py\n+++ b/../outside.py\n@@ -0,0 +1 @@\n+X = 1\n", Outcome.PATCH_FAILED, "does not apply"),
    ],
)
def test_bad_answers_are_refused_with_their_own_outcome(answer, outcome, says):
    applied = apply_answer(fixture_tasks()["slug_spaces"], answer)
    assert applied.files is None and applied.outcome is outcome and says in applied.detail, applied.detail


def test_whole_file_answers_are_held_to_the_same_rules():
    slug = fixture_tasks()["slug_spaces"]
    good = apply_answer(slug, json.dumps({"textkit/slug.py": "def slugify(text):\n    return 'x'\n"}), "files")
    assert good.outcome is None and good.files["textkit/slug.py"].startswith(b"def slugify")
    for name, outcome in (("tests/test_slug.py", Outcome.PATCH_FORBIDDEN), ("../x.py", Outcome.PATCH_FORBIDDEN),
                          ("/etc/x", Outcome.PATCH_FORBIDDEN)):  # fmt: skip
        assert apply_answer(slug, json.dumps({name: "X = 1\n"}), "files").outcome is outcome


def _run(*messages, status=0, **facts):
    from runner.sandbox.repo_job import RepoRunResult

    return RepoRunResult(messages=list(messages), status=status, **facts)


def _phases(node, outcome="passed", raised=False, xfail=False):
    return [{"k": "report", "id": node, "when": w, "outcome": outcome if w == "call" else "passed",
             "raised": raised if w == "call" else False, "xfail": xfail, "msg": ""}
            for w in ("setup", "call", "teardown")]  # fmt: skip


def test_a_verdict_passes_only_on_every_demanded_test_passing_with_the_final_report():
    from runner.repo.statuses import repo_verdict

    slug = fixture_tasks()["slug_spaces"]
    done = {"k": "done", "exit": 0, "tamper": []}
    every = [m for node in slug.demanded for m in _phases(node)]
    assert repo_verdict(slug, _run(*every, done)).outcome is Outcome.PASSED
    cases = {
        "zero tests collected": _run({"k": "collected", "ids": []}, done),
        "no final report (os._exit)": _run(*every),
        "one test missing": _run(*every[3:], done),
        "pytest says passed but it raised": _run(*every[:-3], *_phases(slug.demanded[-1], raised=True), done),
        "an xpass": _run(*every[:-3], *_phases(slug.demanded[-1], xfail=True), done),
        "tampering found at the end": _run(*every, {**done, "tamper": ["_pytest.runner.CallInfo was replaced"]}),
        "an unauthenticated line": _run(*every, done, violations=["an unauthenticated message"]),
        "two final reports": _run(*every, done, done),
        "timed out": _run(*every, done, timed_out=True),
    }
    for name, run in cases.items():
        verdict = repo_verdict(slug, run)
        assert not verdict.passed, name
