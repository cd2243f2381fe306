"""make_backend, BackendError and the retry loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest

from runner.config import BackendConfig, ModelConfig
from runner.generation.backends import BACKENDS, BackendError, make_backend
from runner.generation.backends.cpu import free_cores, own_ticks
from runner.generation.backends.llamacpp import LlamaCppBackend
from runner.generation.backends.ollama import OllamaBackend
from runner.generation.backends.openai import OpenAIBackend
from runner.generation.backends.retry import with_retries

MODEL = ModelConfig(name="m", id="gemma3:4b")


def test_unknown_backend_lists_valid_names():
    with pytest.raises(BackendError) as info:
        make_backend(BackendConfig(name="olama"), MODEL)
    assert info.value.kind == "config" and not info.value.transient
    assert "'olama'" in str(info.value)
    for name in ("llamacpp", "ollama", "openai", "replay"):
        assert name in str(info.value)
    assert sorted(BACKENDS) == ["llamacpp", "ollama", "openai", "replay"]


@pytest.mark.parametrize(
    ("name", "cls"), [("ollama", OllamaBackend), ("openai", OpenAIBackend), ("llamacpp", LlamaCppBackend)]
)
def test_make_backend_builds_the_named_backend(name, cls):
    backend = make_backend(BackendConfig(name=name), MODEL)
    assert isinstance(backend, cls)
    asyncio.run(backend.aclose())


def test_llamacpp_zero_threads_means_the_free_cores(monkeypatch):
    monkeypatch.setattr("runner.generation.backends.llamacpp.free_cores", lambda: 5)
    assert make_backend(BackendConfig(name="llamacpp", n_threads=0), MODEL).threads() == 5
    assert make_backend(BackendConfig(name="llamacpp", n_threads=3), MODEL).threads() == 3


def _stat_samples(*samples):
    it = iter(samples)
    return lambda: next(it)


@pytest.mark.parametrize(
    ("before", "after", "own", "free"),
    [
        # user nice system idle iowait irq softirq steal; 4 cores, 400 ticks in the sample
        ([0] * 8, [0, 0, 0, 400, 0, 0, 0, 0], ({}, {}), 4),  # idle machine: every core
        ([0] * 8, [0, 300, 0, 100, 0, 0, 0, 0], ({}, {}), 4),  # our niced sandboxes busy: they yield, every core
        ([0] * 8, [200, 0, 0, 200, 0, 0, 0, 0], ({}, {}), 2),  # another program keeps two cores busy
        ([0] * 8, [330, 0, 60, 10, 0, 0, 0, 0], ({}, {}), 1),  # all busy: still one thread
        ([0] * 8, [0] * 8, ({}, {}), 4),  # no ticks counted: every core
        # our own sandbox pool warming up (un-niced descendants, 150 ticks; one started in the sample)
        ([0] * 8, [150, 0, 0, 250, 0, 0, 0, 0], ({7: 1000}, {7: 1100, 8: 50}), 4),
        ([0] * 8, [350, 0, 0, 50, 0, 0, 0, 0], ({7: 1000}, {7: 1100, 8: 50}), 2),  # ours and another's
        ([0] * 8, [200, 0, 0, 200, 0, 0, 0, 0], ({7: 1000, 9: 500}, {7: 1000}), 2),  # one of ours ended
    ],
)
def test_free_cores_counts_idle_niced_and_our_own_time(monkeypatch, before, after, own, free):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert free_cores(sample_s=0, read=_stat_samples(before, after), own=_stat_samples(*own)) == free


def test_own_ticks_are_this_process_and_its_un_niced_descendants():
    busy = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end: pass"
    ours = subprocess.Popen([sys.executable, "-c", busy], start_new_session=True)
    niced = subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", busy])
    end = time.monotonic() + 0.9

    def spin():
        while time.monotonic() < end:
            pass

    spinning = threading.Thread(target=spin)
    spinning.start()  # this process's own work (in the job: the MLflow store created beside the model load)
    try:
        time.sleep(0.5)
        first = own_ticks()
        time.sleep(0.3)
        second = own_ticks()
        spinning.join()
        assert second[ours.pid] > first[ours.pid] > 0  # a new session is still ours
        assert niced.pid not in second  # niced time counts as free already
        assert second[os.getpid()] > first[os.getpid()]
    finally:
        for proc in (ours, niced):
            proc.kill()
            proc.wait()


def test_free_cores_is_bounded_by_the_affinity_mask(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0})
    assert free_cores(sample_s=0, read=_stat_samples([0] * 8, [0, 0, 0, 400, 0, 0, 0, 0])) == 1
    assert free_cores(sample_s=0, read=lambda: None) == 1


def test_free_cores_reads_this_machine():
    assert 1 <= free_cores(sample_s=0.05) <= len(os.sched_getaffinity(0))


def test_backend_error_kind_is_checked():
    with pytest.raises(ValueError):
        BackendError("oops", "x")
    err = BackendError("unavailable", "busy", transient=True)
    assert (err.kind, err.transient, str(err)) == ("unavailable", True, "busy")


class Flaky:
    """Fails with the given errors, then returns "ok"."""

    def __init__(self, *errors: BackendError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def retry(call, max_retries=3, backoff_s=1.0):
    delays: list[float] = []

    async def sleep(d: float) -> None:
        delays.append(d)

    result = asyncio.run(with_retries(call, max_retries=max_retries, backoff_s=backoff_s, sleep=sleep))
    return result, delays


def transient(kind: str = "server_error") -> BackendError:
    return BackendError(kind, "boom", transient=True)


def test_backoff_doubles_until_success():
    call = Flaky(transient(), transient("timeout"), transient("unreachable"))
    assert retry(call) == ("ok", [1.0, 2.0, 4.0])
    assert call.calls == 4


def test_gives_up_after_max_retries():
    call = Flaky(*[transient() for _ in range(5)])
    with pytest.raises(BackendError) as info:
        retry(call, max_retries=2, backoff_s=0.5)
    assert call.calls == 3
    assert "gave up after 3 tries" in str(info.value) and info.value.kind == "server_error"


def test_non_transient_raises_at_once():
    call = Flaky(BackendError("bad_request", "no"))
    with pytest.raises(BackendError) as info:
        retry(call)
    assert call.calls == 1 and str(info.value) == "no"


def test_zero_retries_raises_the_original_error():
    call = Flaky(transient())
    with pytest.raises(BackendError) as info:
        retry(call, max_retries=0)
    assert call.calls == 1 and str(info.value) == "boom"


def test_a_warming_sandbox_pool_leaves_the_model_every_core_it_had():
    """The pool warms up beside the model's load: its processes are niced from their start, so the load
    still sees the cores as free (un-niced work that turned niced during the sample counted as taken)."""
    from runner.sandbox.workers.pool import Limits, WorkerPool

    before = free_cores()
    with WorkerPool(workers=2, limits=Limits(), wait=False) as pool:
        during = free_cores(sample_s=0.5)
        pool.wait_ready()
    assert during >= before
