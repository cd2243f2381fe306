"""The cache on a filesystem shared by many jobs: whole entries only, the first writer wins, torn files miss.

The races run in real processes (fork) released together by a barrier, each with its own `Cache`, as
jobs on different machines would be.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from runner.caches.content import Cache, write_atomic

WRITERS = 6
BIG = 2_000_000  # characters: a write that takes long enough for a reader to come in half-way


def _value(writer: int) -> dict:
    blob = str(writer) * BIG
    return {"writer": writer, "blob": blob, "sha256": hashlib.sha256(blob.encode()).hexdigest()}


def _whole(value: dict) -> bool:
    return hashlib.sha256(value["blob"].encode()).hexdigest() == value["sha256"]


def _put_after_barrier(root: str, barrier, writer: int, results) -> None:
    barrier.wait()
    stored = Cache(root).put("generation", "ab" * 32, _value(writer))
    results.put((writer, stored["writer"], _whole(stored)))


def _read_until_done(root: str, barrier, done, results) -> None:
    cache, seen = Cache(root), []
    barrier.wait()
    while not done.is_set():
        value = cache.get("generation", "ab" * 32)
        if value is not None:
            seen.append((value["writer"], _whole(value)))
    results.put(("reader", seen))


def _fork():
    return multiprocessing.get_context("fork")


def test_racing_writers_of_one_key_all_end_with_the_first_entry(tmp_path: Path) -> None:
    ctx = _fork()
    barrier, results, done = ctx.Barrier(WRITERS + 2), ctx.Queue(), ctx.Event()
    readers = [ctx.Process(target=_read_until_done, args=(str(tmp_path), barrier, done, results)) for _ in range(2)]
    writers = [
        ctx.Process(target=_put_after_barrier, args=(str(tmp_path), barrier, i, results)) for i in range(WRITERS)
    ]
    for proc in readers + writers:
        proc.start()
    got = [results.get(timeout=60) for _ in writers]
    done.set()
    seen = [results.get(timeout=60) for _ in readers]
    for proc in readers + writers:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    winners = {stored for _, stored, _ in got}
    assert len(winners) == 1, f"the writers ended with different entries: {got}"
    assert all(whole for _, _, whole in got)
    entry = Cache(tmp_path).get("generation", "ab" * 32)
    assert entry["writer"] in winners and _whole(entry)
    for _, reads in seen:  # a reader saw no entry, then the winner's whole entry: never a part, never another
        assert all(writer in winners and whole for writer, whole in reads)
    assert not list(tmp_path.rglob("*.tmp")), "temp files left behind"


def _replace_repeatedly(path: str, barrier, writer: int) -> None:
    data = json.dumps(_value(writer)).encode()
    barrier.wait()
    for _ in range(5):
        write_atomic(path, data)


def test_a_reader_racing_a_replacing_writer_sees_only_whole_entries(tmp_path: Path) -> None:
    """write_atomic (the last writer wins, e.g. audit's latest-<set>.json): every read is a whole file."""
    ctx = _fork()
    path = tmp_path / "latest.json"
    write_atomic(path, json.dumps(_value(9)).encode())
    barrier = ctx.Barrier(3)
    writers = [ctx.Process(target=_replace_repeatedly, args=(str(path), barrier, i)) for i in range(2)]
    reads: list[dict] = []
    for proc in writers:
        proc.start()
    barrier.wait()
    while any(proc.is_alive() for proc in writers) or not reads:
        reads.append(json.loads(path.read_bytes()))
    for proc in writers:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert all(_whole(value) and value["writer"] in (0, 1, 9) for value in reads)
    assert {value["writer"] for value in reads} & {0, 1}, "the reader never saw a writer's entry"


@pytest.mark.parametrize(
    "torn",
    [b"", b'{"text": "def add(a, b', b'{"text": "caf\xc3', b"\x00\x00\x00\x00"],
    ids=["empty", "cut", "cut-in-a-character", "zeros"],
)
def test_a_torn_entry_is_a_miss_and_the_next_put_replaces_it(tmp_path: Path, torn: bytes) -> None:
    cache = Cache(tmp_path)
    key = "cd" * 32
    path = tmp_path / "generation" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(torn)  # what a foreign, non-atomic writer or a crashed disk may leave
    assert cache.get("generation", key) is None and cache.misses == 1
    assert cache.put("generation", key, {"text": "ok"}) == {"text": "ok"}
    assert cache.get("generation", key) == {"text": "ok"} and cache.hits == 1


def test_a_second_put_of_a_key_keeps_and_returns_the_first_entry(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    assert cache.put("verdict", "ef" * 32, {"outcome": "passed", "duration_s": 0.1})["duration_s"] == 0.1
    assert cache.put("verdict", "ef" * 32, {"outcome": "passed", "duration_s": 0.2})["duration_s"] == 0.1
    assert Cache(tmp_path).get("verdict", "ef" * 32)["duration_s"] == 0.1
    assert cache.put("gold", "01" * 32, []) == [] and cache.get("gold", "01" * 32) == []
