"""Benchmark data files: found on this machine, or downloaded once from their release and checksum-verified.

A file is looked up in this order (see `locate`):
1. `task_set.path`, when set (used as given: a missing or unreadable file is an error, never a download;
   one that is not the published file is used, with a warning naming both checksums);
2. the folder named by the environment variable DATASETS_ENV (`RUNNER_DATASETS_DIR`);
3. the user cache, `$XDG_CACHE_HOME/runner/datasets` (default `~/.cache/runner/datasets`);
4. otherwise it is downloaded from its official release address into the user cache, written only once
   its SHA-256 matches the published one. BASE_URL_ENV (`RUNNER_DATASETS_URL`) replaces the official
   hosts with one base address (`<base>/<file name>`), for mirrors and for the tests' loopback server.
In the folders of 2 and 3 a file may have its local name (`HumanEvalPlus-v0.1.10.jsonl.gz`) or its
release's own (`HumanEvalPlus.jsonl.gz`, as the release page serves it); either is used only when its
SHA-256 is the published one, as a download is: a corrupt or wrong copy stops the job in one line that
names the file and the expected checksum.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import tempfile
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

from runner.caches.user_dir import user_cache_dir
from runner.file_hash import file_sha256
from runner.tasks.loader import TaskError

log = logging.getLogger(__name__)

DATASETS_ENV = "RUNNER_DATASETS_DIR"
BASE_URL_ENV = "RUNNER_DATASETS_URL"
DOWNLOAD_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class DataFile:
    """One published benchmark file: its local name, where its authors publish it, and its SHA-256."""

    name: str
    url: str
    sha256: str

    @property
    def release_name(self) -> str:
        """The file's name in its release (the last part of `url`), e.g. `HumanEvalPlus.jsonl.gz`."""
        return self.url.rsplit("/", 1)[-1]

    @property
    def names(self) -> tuple[str, ...]:
        """The names it is found by in a datasets folder: the local name, then the release's own."""
        return tuple(dict.fromkeys((self.name, self.release_name)))


_EVALPLUS = "https://github.com/evalplus"
FILES = {
    "humanevalplus": DataFile(
        "HumanEvalPlus-v0.1.10.jsonl.gz",
        f"{_EVALPLUS}/humanevalplus_release/releases/download/v0.1.10/HumanEvalPlus.jsonl.gz",
        "272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101",
    ),
    "humanevalplus_mini": DataFile(
        "HumanEvalPlus-Mini-v0.1.10.jsonl.gz",
        f"{_EVALPLUS}/humanevalplus_release/releases/download/v0.1.10/HumanEvalPlus-Mini.jsonl.gz",
        "91486741f1627101021fbe50523df08eebb5b0bf5e804b633dcd5ca3c14dbd2f",
    ),
    "mbppplus": DataFile(
        "MbppPlus-v0.2.0.jsonl.gz",
        f"{_EVALPLUS}/mbppplus_release/releases/download/v0.2.0/MbppPlus.jsonl.gz",
        "af43697e8791c4c149bdfd6b489d8b5412507551ac20e28a439f650b8225db63",
    ),
    "mbpp": DataFile(
        "sanitized-mbpp.json",
        "https://github.com/google-research/google-research/raw/master/mbpp/sanitized-mbpp.json",
        "7fec016546acaee11dbe14f9f0bb670e59f41919f7b522a59fba34871da78551",
    ),
}
"""The benchmark files by task set. Release addresses as EvalPlus itself downloads them
(evalplus/data/utils.py `get_dataset_metadata`, evalplus/data/mbpp.py `get_mbpp`)."""


class DatasetError(TaskError):
    """A benchmark file is neither on this machine nor downloadable; the message says how to provide it."""

    def __init__(self, set_name: str, problem: str) -> None:
        super().__init__(f"task_set {set_name}", None, problem)


def cache_dir() -> Path:
    """The user cache folder for downloaded benchmark files."""
    return user_cache_dir("datasets")


def locate(set_name: str, path: str = "") -> Path:
    """The local file of a benchmark: `path`, DATASETS_ENV's folder, the user cache, or a verified download."""
    if path:
        if not Path(path).is_file():
            problem = f"{path} does not exist; fix task_set.path, or leave it empty for the set's own file"
            raise DatasetError(set_name, problem)
        return _given(set_name, Path(path))
    data = FILES[set_name]
    folder = os.environ.get(DATASETS_ENV, "")
    folders = [Path(folder)] if folder else []
    folders.append(cache_dir())
    for place in (folder / name for folder in folders for name in data.names):
        if place.is_file():
            return verified(set_name, data, place)
    return download(set_name, data, cache_dir())


def verified(set_name: str, data: DataFile, place: Path) -> Path:
    """`place` when its SHA-256 is the published one; else DatasetError naming the file and both checksums."""
    found = file_sha256(place)
    if found != data.sha256:
        raise DatasetError(
            set_name,
            f"{place} has SHA-256 {found}, expected {data.sha256} (the published {data.release_name}): the copy is "
            f"corrupt or another file; replace it with the file from {data.url}, or delete it and the job downloads "
            "it, or give task_set.path=FILE to use it as it is",
        )
    return place


def _given(set_name: str, path: Path) -> Path:
    """A `task_set.path` file: used as given when it reads as JSON (Lines, gzipped for `.gz`); a warning when it
    is not the published file, a DatasetError in one line when it cannot be read."""
    data = FILES.get(set_name)
    if data is not None and file_sha256(path) == data.sha256:
        return path
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        json.loads(line)
        else:
            json.loads(path.read_text(encoding="utf-8"))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError) as exc:
        kind = "gzipped JSON Lines" if path.suffix == ".gz" else "JSON"
        expected = f"; the published file is {data.release_name}, SHA-256 {data.sha256}" if data else ""
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DatasetError(set_name, f"{path} is not readable {kind} ({reason}): fix task_set.path{expected}") from None
    if data is not None:
        log.warning("task_set.path %s is not the published %s (SHA-256 %s); using it as given", path,
                    data.release_name, data.sha256)  # fmt: skip
    return path


def download(set_name: str, data: DataFile, folder: Path) -> Path:
    """Fetch `data` into `folder` (atomically: temp file, SHA-256 check, rename); return its path."""
    base = os.environ.get(BASE_URL_ENV, "").rstrip("/")
    url = f"{base}/{data.name}" if base else data.url
    target = folder / data.name
    folder.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{data.name}.", dir=folder)
    temp = Path(temp_name)
    digest = hashlib.sha256()
    try:
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != data.sha256:
            raise DatasetError(
                set_name,
                f"{data.name} downloaded from {url} has SHA-256 {digest.hexdigest()}, expected {data.sha256}; "
                f"nothing was kept: place the published file in {folder} or set {DATASETS_ENV}",
            )
        os.replace(temp, target)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DatasetError(set_name, _absent(data, folder, f"download from {url} failed ({reason})")) from None
    finally:
        temp.unlink(missing_ok=True)
    return target


def _absent(data: DataFile, cache: Path, why: str) -> str:
    folder = os.environ.get(DATASETS_ENV, "")
    env = f"{DATASETS_ENV}={folder}" if folder else f"{DATASETS_ENV} (unset)"
    names = " nor ".join(data.names[1:])
    return (
        f"{data.name} not found ({f'nor {names}; ' if names else ''}looked in {env} and {cache}) and {why}; "
        f"put the file in {cache}, set {DATASETS_ENV} to a folder holding it, or give task_set.path=FILE"
    )
