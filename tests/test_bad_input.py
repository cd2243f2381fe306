"""Bad input from real `python -m runner` runs: one line naming the key, the value and what is allowed, exit code
1, and nothing left behind (no job folder, no MLflow run) by a job that stopped before any work."""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from runner.job.phases import is_phase_line
from runner.tasks.datasets import DATASETS_ENV, FILES
from tests.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[1]
MODEL = "qwen2.5-coder-7b"
PLUS = FILES["humanevalplus"]
PUBLISHED = Path(os.environ.get(DATASETS_ENV, "/nonexistent"))


def run(tmp: Path, *overrides: str, env: dict | None = None) -> tuple[int, list[str], str]:
    """A job with its folder, store and cache under `tmp`: (exit code, the output's lines that are not phase
    lines, the whole output)."""
    command = [sys.executable, "-m", "runner", f"hydra.run.dir={tmp}/job", f"cache_dir={tmp}/cache",
               f"tracking.uri=sqlite:///{tmp}/store/mlflow.db", f"tracking.artifact_root={tmp}/store/artifacts",
               "sandbox.workers=1", *overrides]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    output = done.stdout + done.stderr  # the job's errors are logged through Hydra's console handler, on stdout
    said = [line for line in output.splitlines() if line.strip() and not is_phase_line(line)]
    return done.returncode, said, output


def store_runs(tmp: Path) -> list[tuple[str, str]]:
    db = tmp / "store" / "mlflow.db"
    if not db.is_file():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT name, status FROM runs").fetchall()


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("sampling.temperature=abc",
         "error: sampling.temperature=abc: 'abc' is not a number; sampling.temperature takes a number >= 0"),
        ("sampling.n=two", "error: sampling.n=two: 'two' is not a whole number; sampling.n takes a whole number >= 1"),
        ("gold.enabled=maybe", "error: gold.enabled=maybe: 'maybe' is not true or false; gold.enabled takes true or "
                               "false"),
        ("model=nope", "error: model=nope: Could not find 'model/nope'; the options of model are: gemma3_12b, "
                       "gemma3_4b, qwen25_coder_05b, qwen25_coder_15b, qwen3_8b, smollm2_135m"),
        ("sampling=hot", "error: sampling=hot: Could not find 'sampling/hot'; the options of sampling are: greedy, "
                         "pass_at_k"),
        ("sampling.temprature=0.5", "error: sampling.temprature=0.5: unknown config key sampling.temprature; the keys "
                                    "there are: temperature, top_p, num_predict, n, stop"),
        ("sampling.stop=[", "error: sampling.stop=[: not a valid override (no viable alternative at input '['); write "
                            "key=value, quoting values with spaces or brackets, see "
                            "https://hydra.cc/docs/advanced/override_grammar/basic/"),
    ],
    ids=["wrong-type", "not-a-whole-number", "not-a-bool", "unknown-model", "unknown-sampling", "unknown-key",
         "bad-grammar"],
)  # fmt: skip
def test_an_override_hydra_rejects_is_one_line_and_exit_1(tmp_path, override, line):
    code, said, output = run(tmp_path, override)
    assert code == 1 and said == [line], output
    assert not (tmp_path / "job").exists() and not (tmp_path / "store").exists()


def test_a_user_who_asks_for_hydras_full_error_gets_it(tmp_path):
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    code, _, output = run(tmp_path, "sampling.temperature=abc", env=env)
    assert code == 1 and "Traceback" in output and "could not be converted to Float" in output


@pytest.fixture
def server():
    running = FakeOpenAI(models=(MODEL,)).start()
    yield running
    running.stop()


def _one_error_and_nothing_left(tmp: Path, code: int, said: list[str], output: str, expected: str) -> None:
    assert code == 1, output
    assert len(said) == 1 and expected in said[0] and "Traceback" not in output, output
    assert not (tmp / "job").exists(), sorted(p.name for p in (tmp / "job").iterdir())
    assert store_runs(tmp) == []


def test_an_unknown_task_id_leaves_no_folder_and_no_run(tmp_path, server):
    out = run(tmp_path, "backend=openai", f"backend.base_url={server.url}/v1", f"model.id={MODEL}",
              "task_set.ids=[no_such_task]")  # fmt: skip
    _one_error_and_nothing_left(tmp_path, *out, "task_set.ids: unknown task ids ['no_such_task']")
    assert server.requests == []


def test_an_unreachable_server_leaves_no_folder_and_no_run(tmp_path, server):
    url = server.url
    server.stop()  # nothing listens there now
    out = run(tmp_path, "backend=openai", f"backend.base_url={url}/v1", f"model.id={MODEL}", "backend.max_retries=0")
    _one_error_and_nothing_left(tmp_path, *out, f"cannot connect to {url}/v1")


def test_a_model_the_server_does_not_serve_leaves_no_folder_and_no_run(tmp_path, server):
    out = run(tmp_path, "backend=openai", f"backend.base_url={server.url}/v1", "model.id=other-model")
    _one_error_and_nothing_left(tmp_path, *out, "model 'other-model' is not served")
    assert server.chat_requests() == []


def test_a_missing_dataset_path_leaves_no_folder_and_no_run(tmp_path):
    out = run(tmp_path, "task_set=humanevalplus", f"task_set.path={tmp_path}/nowhere.jsonl.gz")
    _one_error_and_nothing_left(tmp_path, *out, f"{tmp_path}/nowhere.jsonl.gz does not exist; fix task_set.path")


def test_a_folder_holding_an_earlier_jobs_records_is_kept(tmp_path):
    earlier = tmp_path / "job" / "attempts.jsonl"
    earlier.parent.mkdir()
    earlier.write_text('{"task_id": "two_sum"}\n')
    code, said, output = run(tmp_path, "task_set.ids=[no_such_task]")
    assert code == 1 and len(said) == 1, output
    assert earlier.read_text() == '{"task_id": "two_sum"}\n'


def _corrupt_copy(folder: Path, name: str = PLUS.name) -> Path:
    folder.mkdir()
    data = (PUBLISHED / PLUS.name).read_bytes()
    (folder / name).write_bytes(data[: len(data) // 2])  # a download cut off half-way
    return folder / name


needs_published = pytest.mark.skipif(not (PUBLISHED / PLUS.name).is_file(), reason="no published HumanEval+ copy")


@needs_published
def test_a_corrupt_copy_in_the_datasets_folder_is_one_line_naming_it_and_the_expected_hash(tmp_path):
    copy = _corrupt_copy(tmp_path / "datasets")
    env = {**os.environ, DATASETS_ENV: str(copy.parent)}
    out = run(tmp_path, "task_set=humanevalplus", "task_set.limit=1", env=env)
    _one_error_and_nothing_left(tmp_path, *out, f"task_set humanevalplus: {copy} has SHA-256 ")
    assert f"expected {PLUS.sha256} (the published HumanEvalPlus.jsonl.gz)" in out[1][0]


@needs_published
def test_another_release_under_the_files_name_is_refused(tmp_path):
    folder = tmp_path / "datasets"
    folder.mkdir()
    shutil.copy(PUBLISHED / FILES["humanevalplus_mini"].name, folder / PLUS.release_name)  # the Mini file, renamed
    env = {**os.environ, DATASETS_ENV: str(folder)}
    out = run(tmp_path, "task_set=humanevalplus", "task_set.limit=1", env=env)
    _one_error_and_nothing_left(tmp_path, *out, f"{folder / PLUS.release_name} has SHA-256 ")


@needs_published
def test_a_corrupt_file_given_as_task_set_path_is_one_line(tmp_path):
    copy = _corrupt_copy(tmp_path / "mine")
    out = run(tmp_path, "task_set=humanevalplus", f"task_set.path={copy}")
    _one_error_and_nothing_left(tmp_path, *out, f"{copy} is not readable gzipped JSON Lines")
    assert f"the published file is HumanEvalPlus.jsonl.gz, SHA-256 {PLUS.sha256}" in out[1][0]


@needs_published
def test_the_releases_own_file_name_is_found_and_verified(tmp_path, monkeypatch):
    from runner.tasks.datasets import locate

    folder = tmp_path / "datasets"
    folder.mkdir()
    shutil.copy(PUBLISHED / PLUS.name, folder / "HumanEvalPlus.jsonl.gz")  # as the release page serves it
    monkeypatch.setenv(DATASETS_ENV, str(folder))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert locate("humanevalplus") == folder / "HumanEvalPlus.jsonl.gz"
    with gzip.open(folder / "HumanEvalPlus.jsonl.gz", "rt") as handle:
        assert '"task_id": "HumanEval/0"' in handle.readline()
