"""The gold check of repo tasks, with real environments and the real sandbox, through its command line.

The fixture set is all ok; each defect planted in a copy of it is reported with its own status while
the other tasks stay ok, and the command exits 1.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from runner.config import RepoConfig
from runner.kinds.base import Bench
from runner.kinds.registry import check_references
from runner.sandbox.workers.pool import Limits, WorkerPool
from runner.tasks.loader import load_task_dir
from tests.repo_fixtures import SHARED_ENVS, copy_set, environments

ROOT = Path(__file__).resolve().parents[1]


def _gold_cli(task_dir: Path, tmp_path: Path) -> tuple[int, list[dict], str]:
    out = tmp_path / "gold.json"
    done = subprocess.run(
        [sys.executable, "-m", "runner.gold", f"task_set.path={task_dir}", f"out={out}", "workers=1",
         f"cache_dir={tmp_path}/cache", f"repo.env_dir={SHARED_ENVS}"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return done.returncode, json.loads(out.read_text()) if out.exists() else [], done.stdout + done.stderr


def _edit(task_dir: Path, **changes) -> None:
    path = task_dir / "task.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))


def test_the_fixture_set_is_gold_ok_through_the_command(tmp_path):
    code, report, output = _gold_cli(copy_set(tmp_path), tmp_path)
    assert code == 0, output
    assert {r["task_id"]: r["status"] for r in report} == {"double": "ok", "slug_spaces": "ok", "span_dict": "ok"}


def test_a_removed_requirement_is_env_missing_module_naming_it(tmp_path):
    root = copy_set(tmp_path)
    _edit(root / "span_dict", requirements=[])
    code, report, output = _gold_cli(root, tmp_path)
    rows = {r["task_id"]: r for r in report}
    assert code == 1 and rows["slug_spaces"]["status"] == "ok" and rows["double"]["status"] == "ok", output
    span = rows["span_dict"]
    assert span["status"] == "env_missing_module", span
    assert span["modules"] == [{"module": "dirty_equals", "pip": "dirty-equals"}]
    assert "dirty_equals (pip install dirty-equals)" in span["detail"]


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, Limits(timeout_s=30, cpu_s=30)) as running:
        yield running


def _statuses(root: Path, pool) -> dict[str, tuple[str, str]]:
    results = check_references(load_task_dir(root), Bench(pool, repo=RepoConfig(timeout_s=30), envs=environments()))
    return {r.task_id: (r.status, r.detail) for r in results}


def test_fail_to_pass_tests_that_already_pass_are_reported(tmp_path, pool):
    root = copy_set(tmp_path)
    slug = root / "slug_spaces" / "repo" / "textkit" / "slug.py"
    slug.write_text(slug.read_text().replace('split(" ")', "split()"))  # the fix is already in the repo
    found = _statuses(root, pool)
    assert found["slug_spaces"][0] == "fail_to_pass_already_pass" and "test_repeated_spaces" in found["slug_spaces"][1]
    assert found["span_dict"][0] == "ok" and found["double"][0] == "ok"


@pytest.mark.parametrize(
    ("plant", "status", "says"),
    [
        ("node_id_typo", "no_tests_collected", "tests/test_slug.py::test_nope"),
        ("broken_gold_patch", "patch_failed", "gold.patch: the patch does not apply"),
        ("gold_patch_edits_tests", "patch_forbidden", "protected path tests/"),
        ("gold_patch_wrong", "test_failed", "test_tabs_and_newlines failed"),
        ("slow_tests", "timeout", "time limit"),
        ("own_package_unimportable", "env_import_error", "textkit"),
    ],
)
def test_each_defect_gets_its_own_status(tmp_path, pool, plant, status, says):
    root = copy_set(tmp_path)
    task = root / "slug_spaces"
    gold = task / "gold.patch"
    if plant == "node_id_typo":
        _edit(task, fail_to_pass=["tests/test_slug.py::test_repeated_spaces", "tests/test_slug.py::test_nope"])
    elif plant == "broken_gold_patch":
        gold.write_text(gold.read_text().replace('split(" ")', 'split("?")'))
    elif plant == "gold_patch_edits_tests":
        extra = "diff --git a/tests/helper.py b/tests/helper.py\nnew file mode 100644\n--- /dev/null\n"
        gold.write_text(gold.read_text() + extra + "+++ b/tests/helper.py\n@@ -0,0 +1 @@\n+X = 1\n")
    elif plant == "gold_patch_wrong":
        wrong = "+    return \"-\".join(w for w in text.lower().split(' ') if w)"
        gold.write_text(gold.read_text().replace('+    return "-".join(text.lower().split())', wrong))
    elif plant == "slow_tests":
        _edit(task, test_timeout_s=1)
        test = task / "repo" / "tests" / "test_slug.py"
        slow = test.read_text().replace("def test_ascii():", "def test_ascii():\n    time.sleep(30)")
        test.write_text("import time\n" + slow)
    elif plant == "own_package_unimportable":
        (task / "repo" / "src").mkdir()
        (task / "repo" / "textkit").rename(task / "repo" / "src" / "textkit")  # a src layout, no pythonpath set
        _edit(task, shown_files=["src/textkit/slug.py"])
        gold.write_text(gold.read_text().replace("textkit/slug.py", "src/textkit/slug.py"))
    found = _statuses(root, pool)
    assert found["slug_spaces"][0] == status and says in found["slug_spaces"][1], found["slug_spaces"]
    assert found["span_dict"][0] == "ok"
