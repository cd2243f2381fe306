"""The committed JSON schema of task files stays in step with the task model and the loaders."""

import datetime as dt
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from runner.tasks import loader, repo_loader
from runner.tasks.schema import SCHEMA_PATH, schema_text, task_schema

ROOT = Path(__file__).resolve().parents[1]
TASK_FILES = sorted([*ROOT.glob("tasks/*/*.yaml"), *ROOT.glob("tasks/*/*/task.yaml"),
                     *ROOT.glob("tests/fixtures/repo_tasks/**/*.yaml")])  # fmt: skip


def _data(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    return {k: v.isoformat() if isinstance(v, dt.date) else v for k, v in data.items()}


def test_the_committed_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text() == schema_text(), "run python -m runner.tasks.schema and commit the file"


def test_the_check_mode_says_so_in_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "runner.tasks.schema", "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("kind", "required", "optional"),
    [("function", loader.REQUIRED, loader.OPTIONAL), ("repo", repo_loader.REPO_REQUIRED, repo_loader.REPO_OPTIONAL)],
)
def test_the_schema_accepts_exactly_the_loaders_keys(kind, required, optional):
    spec = task_schema()["$defs"][kind]
    assert set(spec["properties"]) == {*required, *optional}
    assert set(spec["required"]) == set(required)
    assert spec["additionalProperties"] is False


@pytest.mark.parametrize("path", TASK_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_task_file_is_valid_and_names_the_schema(path):
    jsonschema.validate(_data(path), task_schema())
    first = path.read_text().splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    assert (path.parent / first.split("=", 1)[1]).resolve() == SCHEMA_PATH


def test_the_schema_refuses_what_the_loader_refuses():
    good = _data(ROOT / "tests/fixtures/repo_tasks/slug_spaces/task.yaml")
    for bad in ({**good, "requirements": ["dirty-equals"]}, {**good, "fail_to_pass": ["tests/test_slug.py"]},
                {**good, "typo": 1}, {k: v for k, v in good.items() if k != "shown_files"}):  # fmt: skip
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, task_schema())
