"""Benchmark files on a fresh machine: lookup order, a verified download from a real loopback server, errors."""

import functools
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from runner.job.phases import is_phase_line
from runner.tasks import datasets
from runner.tasks.datasets import BASE_URL_ENV, DATASETS_ENV, FILES, DatasetError, locate

ROOT = Path(__file__).resolve().parents[1]
MBPP = FILES["mbpp"]
PUBLISHED = Path(os.environ.get(DATASETS_ENV, "/nonexistent"))
"""The published files on this machine (tests/conftest.py points the variable at ../shared/datasets)."""


class FileServer:
    """A static HTTP server on 127.0.0.1 serving one folder, counting the requests it answers."""

    def __init__(self, folder: Path) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - quiet test output
                pass

            def do_GET(self):  # noqa: N802
                outer.requests.append(self.path)
                super().do_GET()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def fresh_machine(tmp_path, monkeypatch):
    """No datasets folder, an empty user cache under tmp_path; returns the cache folder."""
    monkeypatch.delenv(DATASETS_ENV, raising=False)
    monkeypatch.delenv(BASE_URL_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "runner" / "datasets"


def _dead_url() -> str:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.mark.skipif(not (PUBLISHED / MBPP.name).is_file(), reason="no published copy to place")
def test_lookup_order_path_then_env_folder_then_user_cache(fresh_machine, tmp_path, monkeypatch):
    own, folder = tmp_path / "mine.json", tmp_path / "folder"
    folder.mkdir()
    fresh_machine.mkdir(parents=True)
    own.write_text("[]")  # task_set.path is used as given; the folders' copies must be the published file
    for place in (folder / MBPP.name, fresh_machine / MBPP.name):
        shutil.copy(PUBLISHED / MBPP.name, place)
    assert locate("mbpp") == fresh_machine / MBPP.name
    monkeypatch.setenv(DATASETS_ENV, str(folder))
    assert locate("mbpp") == folder / MBPP.name
    assert locate("mbpp", str(own)) == own
    with pytest.raises(DatasetError, match="nothere.json does not exist; fix task_set.path"):
        locate("mbpp", str(tmp_path / "nothere.json"))


def test_default_user_cache_is_under_home(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert datasets.cache_dir() == tmp_path / ".cache" / "runner" / "datasets"


@pytest.mark.skipif(not (PUBLISHED / MBPP.name).is_file(), reason="no published copy to serve")
def test_downloaded_once_verified_into_the_user_cache(fresh_machine, tmp_path, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(PUBLISHED / MBPP.name, served / MBPP.name)
    with FileServer(served) as server:
        monkeypatch.setenv(BASE_URL_ENV, server.url)
        path = locate("mbpp")
        assert path == fresh_machine / MBPP.name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == MBPP.sha256
        assert locate("mbpp") == path  # the second time from the cache
        assert server.requests == [f"/{MBPP.name}"]
    assert sorted(p.name for p in fresh_machine.iterdir()) == [MBPP.name]  # no temp file left
    from runner.tasks.importers import load_mbpp

    assert len(load_mbpp()) == 427


def test_bad_checksum_keeps_nothing(fresh_machine, tmp_path, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    (served / MBPP.name).write_text('[{"tampered": true}]')
    with FileServer(served) as server:
        monkeypatch.setenv(BASE_URL_ENV, server.url)
        with pytest.raises(DatasetError, match=f"has SHA-256 .* expected {MBPP.sha256}; nothing was kept"):
            locate("mbpp")
    assert list(fresh_machine.iterdir()) == []


def test_missing_on_the_server_is_one_clear_line(fresh_machine, tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    with FileServer(tmp_path / "empty") as server:
        monkeypatch.setenv(BASE_URL_ENV, server.url)
        with pytest.raises(DatasetError, match=r"sanitized-mbpp.json not found .* failed \(.*not found"):
            locate("mbpp")
    assert list(fresh_machine.iterdir()) == []


def test_unreachable_server_says_which_file_where_and_how(fresh_machine, monkeypatch):
    monkeypatch.setenv(BASE_URL_ENV, _dead_url())
    with pytest.raises(DatasetError) as err:
        locate("humanevalplus")
    message = str(err.value)
    assert "\n" not in message
    assert FILES["humanevalplus"].name in message and f"{DATASETS_ENV} (unset)" in message
    assert str(fresh_machine) in message and "task_set.path=FILE" in message
    assert list(fresh_machine.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        ["-m", "runner", "task_set=humanevalplus", "tracking.enabled=false", "hydra.run.dir=OUT"],
        ["-m", "runner.gold", "task_set=humanevalplus"],
    ],
    ids=["job", "gold"],
)
def test_fresh_machine_offline_fails_in_one_line(tmp_path, command):
    env = {k: v for k, v in os.environ.items() if k not in (DATASETS_ENV, BASE_URL_ENV)}
    env.update(XDG_CACHE_HOME=str(tmp_path / "xdg"), **{BASE_URL_ENV: _dead_url()})
    command = [arg.replace("OUT", str(tmp_path / "out")) for arg in command]
    done = subprocess.run([sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr  # the job logs through Hydra's console handler, on stdout
    lines = [line for line in output.splitlines() if line.strip() and not is_phase_line(line)]  # progress, not errors
    assert done.returncode == 1, output
    assert len(lines) == 1 and "Traceback" not in output, output
    assert "task_set humanevalplus: HumanEvalPlus-v0.1.10.jsonl.gz not found" in lines[0] and DATASETS_ENV in lines[0]
