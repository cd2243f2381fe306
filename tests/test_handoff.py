"""The worker pool's idle queue hands workers to waiting callers first come, first served."""

from __future__ import annotations

import threading
import time

import pytest

from runner.sandbox.workers import handoff as handoff_module
from runner.sandbox.workers.handoff import Handoff


def _wait_for_waiters(queue: Handoff, count: int) -> None:
    deadline = time.monotonic() + 5
    while queue.waiting() < count:
        assert time.monotonic() < deadline, "the waiting thread never called get"
        time.sleep(0.001)


def _get_within(queue: Handoff, seconds: float = 5):
    """`queue.get()` in a daemon thread: a broken queue fails the test instead of hanging the run."""
    got = []
    thread = threading.Thread(target=lambda: got.append(queue.get()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert got, f"get() found no item within {seconds} s"
    return got[0]


def test_a_worker_put_back_goes_to_the_oldest_waiter_not_to_the_caller_that_asks_again():
    queue: Handoff[str] = Handoff()
    queue.put("worker")
    held = queue.get()
    got: list[tuple[str, str]] = []
    waiter = threading.Thread(target=lambda: got.append(("waiter", queue.get())), daemon=True)
    waiter.start()
    _wait_for_waiters(queue, 1)

    def put_back_and_ask_again() -> None:  # as a pool thread does with its next job, without yielding
        queue.put(held)
        got.append(("releaser", queue.get()))

    releaser = threading.Thread(target=put_back_and_ask_again, daemon=True)
    releaser.start()
    waiter.join(5)
    assert got == [("waiter", "worker")]  # a queue.Queue gives it to the releaser: it asks while the waiter sleeps
    queue.put("worker")
    releaser.join(5)
    assert got == [("waiter", "worker"), ("releaser", "worker")]


def test_waiters_are_served_in_the_order_they_began_to_wait():
    queue: Handoff[int] = Handoff()
    got: dict[str, int] = {}
    threads = []
    for name in "abc":
        thread = threading.Thread(target=lambda name=name: got.update({name: queue.get()}), daemon=True)
        thread.start()
        threads.append(thread)
        _wait_for_waiters(queue, len(threads))
    for item in range(3):
        queue.put(item)
    for thread in threads:
        thread.join(5)
    assert got == {"a": 0, "b": 1, "c": 2}


def test_free_items_are_taken_without_waiting_in_the_order_they_were_put():
    queue: Handoff[str] = Handoff()
    queue.put("one")
    queue.put("two")
    assert (queue.get(), queue.get(), queue.waiting()) == ("one", "two", 0)


class _Interrupted(handoff_module._Waiter):
    """A waiter whose wait is interrupted (Ctrl-C), after `put` handed it an item or before."""

    handed_first = False
    queue: Handoff | None = None

    def __init__(self) -> None:
        super().__init__()
        self.ready.wait = self._interrupt  # type: ignore[method-assign]

    def _interrupt(self, timeout=None):
        if self.handed_first:
            self.queue.put("worker")  # the item reaches this waiter just before the interrupt
        raise KeyboardInterrupt


@pytest.mark.parametrize("handed_first", [False, True])
def test_an_interrupted_caller_leaves_no_worker_behind_and_no_waiter(monkeypatch, handed_first):
    queue: Handoff[str] = Handoff()
    monkeypatch.setattr(_Interrupted, "handed_first", handed_first)
    monkeypatch.setattr(_Interrupted, "queue", queue)
    monkeypatch.setattr(handoff_module, "_Waiter", _Interrupted)
    with pytest.raises(KeyboardInterrupt):
        queue.get()
    assert queue.waiting() == 0
    monkeypatch.undo()
    if not handed_first:
        queue.put("worker")
    assert _get_within(queue) == "worker"  # the worker handed to the interrupted caller is free again
