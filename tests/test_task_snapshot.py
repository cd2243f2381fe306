"""Task-set snapshots: a benchmark set built once is read back whole, and anything it was built from is its key."""

import pytest

from runner.config import TaskSetConfig
from runner.tasks import Task, load_task_set
from runner.tasks.snapshot import snapshot_path, snapshot_tasks
from tests.conftest import datasets_available

TASKS = [Task("t/1", "f", "", "def f():\n    return 1\n", {"hidden": "def test_f():\n    assert f() == 1\n"})]


class Builder:
    """A build function that counts its calls."""

    def __init__(self, tasks: list[Task]) -> None:
        self.tasks, self.calls = tasks, 0

    def __call__(self) -> list[Task]:
        self.calls += 1
        return list(self.tasks)


def test_a_snapshot_is_read_back_instead_of_built_again(tmp_path):
    data = tmp_path / "set.jsonl"
    data.write_text("one\n")
    build = Builder(TASKS)
    first = snapshot_tasks(tmp_path / "cache", ("set", []), [data], build)
    again = snapshot_tasks(tmp_path / "cache", ("set", []), [data], build)
    assert first == again == TASKS and build.calls == 1


def test_the_files_bytes_and_the_selection_are_part_of_the_key(tmp_path):
    data = tmp_path / "set.jsonl"
    data.write_text("one\n")
    build = Builder(TASKS)
    snapshot_tasks(tmp_path, ("set", []), [data], build)
    snapshot_tasks(tmp_path, ("set", ["t/1"]), [data], build)
    assert build.calls == 2
    data.write_text("two\n")
    snapshot_tasks(tmp_path, ("set", []), [data], build)
    assert build.calls == 3


def test_a_torn_snapshot_is_built_again(tmp_path):
    data = tmp_path / "set.jsonl"
    data.write_text("one\n")
    build = Builder(TASKS)
    snapshot_tasks(tmp_path, ("set", []), [data], build)
    path = snapshot_path(tmp_path, ("set", []), [data])
    path.write_bytes(path.read_bytes()[:20])
    assert snapshot_tasks(tmp_path, ("set", []), [data], build) == TASKS and build.calls == 2
    assert snapshot_tasks(tmp_path, ("set", []), [data], build) == TASKS and build.calls == 2  # whole again


@pytest.mark.skipif(not datasets_available(), reason="benchmark files absent (RUNNER_DATASETS_DIR)")
def test_a_loaded_evalplus_set_comes_back_from_its_snapshot_unchanged(tmp_path):
    from runner.tasks import importers

    cfg = TaskSetConfig(name="humanevalplus", importer="humanevalplus", path="", ids=["HumanEval/2", "HumanEval/130"])
    built = load_task_set(cfg, cache_dir=tmp_path)
    assert len(list((tmp_path / "task_sets").glob("*.pkl"))) == 1
    read = load_task_set(cfg, cache_dir=tmp_path)
    chosen = lambda tasks: [t for t in tasks if t.id in cfg.ids]  # noqa: E731
    direct = importers.load_humanevalplus(select=chosen, cache_dir=tmp_path)
    assert read == built == direct and [t.id for t in read] == cfg.ids


def test_humaneval_comes_back_from_its_snapshot_unchanged(tmp_path):
    from runner.tasks import importers

    cfg = TaskSetConfig(name="humaneval", importer="humaneval", path="", limit=3)
    built = load_task_set(cfg, cache_dir=tmp_path)
    assert len(list((tmp_path / "task_sets").glob("*.pkl"))) == 1
    read = load_task_set(cfg, cache_dir=tmp_path)
    assert read == built == importers.load_humaneval()[:3]
    other = load_task_set(TaskSetConfig(name="humaneval", importer="humaneval", path="", ids=["HumanEval/7"]), tmp_path)
    assert [t.id for t in other] == ["HumanEval/7"] and len(list((tmp_path / "task_sets").glob("*.pkl"))) == 2
