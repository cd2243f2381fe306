"""The YAML task loader: every class of bad input gives an error naming the file and the field."""

import shutil
from pathlib import Path

import pytest

from runner.tasks import select_tasks
from runner.tasks.loader import TaskError, load_task_dir, load_task_file

FIXTURES = Path(__file__).parent / "fixtures" / "tasks"


def test_good_task_loads():
    task = load_task_file(FIXTURES / "good.yaml")
    assert task.id == "add" and task.entry_point == "add"
    assert set(task.suites) == {"visible", "hidden"}
    assert task.tags == ("arithmetic",) and str(task.created) == "2026-09-01"


@pytest.mark.parametrize(
    ("fixture", "field", "words"),
    [
        ("unknown_field.yaml", "promt", "unknown field"),
        ("missing_field.yaml", "reference", "missing required field"),
        ("unknown_suite.yaml", "secret", "unknown field at suites"),
        ("suite_syntax.yaml", "suites.hidden", "does not parse"),
        ("reference_syntax.yaml", "reference", "does not parse"),
        ("entry_point_missing.yaml", "reference", "does not define the entry point `add`"),
        ("no_tests.yaml", "suites.visible", "defines no test"),
        ("bad_date.yaml", "created", "YYYY-MM-DD"),
        ("not_yaml.yaml", None, "not valid YAML"),
    ],
)
def test_bad_task_is_rejected_with_file_and_field(fixture, field, words):
    with pytest.raises(TaskError) as info:
        load_task_file(FIXTURES / fixture)
    message = str(info.value)
    assert fixture in message
    assert words in message
    assert info.value.field == field
    if field:
        assert f"`{field}`" in message


def test_duplicate_id_names_both_files(tmp_path):
    shutil.copy(FIXTURES / "good.yaml", tmp_path / "a.yaml")
    shutil.copy(FIXTURES / "good.yaml", tmp_path / "b.yaml")
    with pytest.raises(TaskError, match=r"b\.yaml, field `id`: duplicate id 'add' \(also in .*a\.yaml\)"):
        load_task_dir(tmp_path)


def test_empty_and_missing_directories(tmp_path):
    with pytest.raises(TaskError, match="no \\*.yaml task files"):
        load_task_dir(tmp_path)
    with pytest.raises(TaskError, match="directory not found"):
        load_task_dir(tmp_path / "nope")


def test_content_hash_ignores_location_but_not_content(tmp_path):
    a = load_task_file(FIXTURES / "good.yaml")
    shutil.copy(FIXTURES / "good.yaml", tmp_path / "copy.yaml")
    b = load_task_file(tmp_path / "copy.yaml")
    assert a.content_hash() == b.content_hash()
    (tmp_path / "copy.yaml").write_text(
        (FIXTURES / "good.yaml").read_text().replace("add(-1, -2) == -3", "add(-1, 0) == -1")
    )
    assert load_task_file(tmp_path / "copy.yaml").content_hash() != a.content_hash()


def test_select_tasks_filters(tmp_path):
    task = load_task_file(FIXTURES / "good.yaml")
    assert select_tasks([task], [], 0, "2026-08-31") == [task]
    assert select_tasks([task], [], 0, "2026-09-01") == []
    with pytest.raises(TaskError, match="unknown task ids"):
        select_tasks([task], ["nope"], 0, "")
    with pytest.raises(TaskError, match="not a date"):
        select_tasks([task], [], 0, "soon")


def test_tools_report_a_bad_task_in_one_line(tmp_path):
    import subprocess
    import sys

    shutil.copy(FIXTURES / "unknown_field.yaml", tmp_path / "bad.yaml")
    for tool in ("runner.gold", "runner.audit"):
        out = subprocess.run([sys.executable, "-m", tool, f"task_set.path={tmp_path}", "tracking=off"],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        assert out.returncode == 1, out.stderr
        assert "bad.yaml, field `promt`: unknown field" in out.stderr and "Traceback" not in out.stderr


def test_a_task_file_that_is_not_utf8_is_a_task_error(tmp_path):
    text = (FIXTURES / "good.yaml").read_text()
    (tmp_path / "latin1.yaml").write_bytes(text.encode("utf-8") + "# café\n".encode("latin-1"))
    with pytest.raises(TaskError, match=r"latin1\.yaml: is not UTF-8 text \(byte \d+\); save the file as UTF-8"):
        load_task_dir(tmp_path)


def test_a_directory_named_like_a_task_is_a_task_error(tmp_path):
    shutil.copy(FIXTURES / "good.yaml", tmp_path / "a.yaml")
    (tmp_path / "x.yaml").mkdir()
    with pytest.raises(TaskError, match=r"x\.yaml: is not a file"):
        load_task_dir(tmp_path)


EDGE_CASES = """edge_cases:
  - name: negative numbers
    when: a < 0 or b < 0
"""


def test_edge_cases_load_and_leave_the_content_hash_alone(tmp_path):
    plain = load_task_file(FIXTURES / "good.yaml")
    (tmp_path / "edgy.yaml").write_text((FIXTURES / "good.yaml").read_text() + EDGE_CASES)
    edgy = load_task_file(tmp_path / "edgy.yaml")
    assert [(c.name, c.when) for c in edgy.edge_cases] == [("negative numbers", "a < 0 or b < 0")]
    assert plain.edge_cases == ()
    # only the audit reads them: verdicts (and the caches keyed by the content hash) do not depend on them
    assert edgy.content_hash() == plain.content_hash()


@pytest.mark.parametrize(
    ("block", "field", "words"),
    [
        ("edge_cases: {a: 1}\n", "edge_cases", "must be a list"),
        ("edge_cases: [a < 0]\n", "edge_cases[0]", "must be a mapping with keys name and when"),
        ("edge_cases:\n  - name: x\n", "when", "missing required field at edge_cases[0]"),
        ("edge_cases:\n  - {name: x, when: a, why: y}\n", "why", "unknown field at edge_cases[0]"),
        ("edge_cases:\n  - {name: '', when: a}\n", "edge_cases[0].name", "non-empty string"),
        ("edge_cases:\n  - {name: x, when: a}\n  - {name: x, when: b}\n", "edge_cases[1].name", "duplicate edge case"),
        ("edge_cases:\n  - {name: x, when: 'a <'}\n", "edge_cases[0].when", "is not a Python expression"),
        ("edge_cases:\n  - {name: x, when: 'b = 1'}\n", "edge_cases[0].when", "is not a Python expression"),
    ],
)
def test_bad_edge_cases_are_rejected_with_the_field(tmp_path, block, field, words):
    (tmp_path / "edgy.yaml").write_text((FIXTURES / "good.yaml").read_text() + block)
    with pytest.raises(TaskError) as info:
        load_task_file(tmp_path / "edgy.yaml")
    assert info.value.field == field and words in str(info.value)
