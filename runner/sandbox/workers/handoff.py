"""Idle workers handed to the callers waiting for one in the order they began to wait.

A `queue.Queue` of idle workers is not fair: when a worker is put back, the waiter it wakes still has to
run before it can take it, and a caller that was not waiting (the thread that has just put it back and
asks again with its next job) usually takes it first. With more callers than workers, a caller could then
wait until every later job had run: the slowest tasks, sent first on purpose, finished last (HumanEval+'s
/59 and /130 waited from the start and finished 1.1-1.6 s after every other sample). Here a
worker put back goes straight to the oldest waiter.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class _Waiter(Generic[T]):
    def __init__(self) -> None:
        self.ready = threading.Event()
        self.item: T | None = None


class Handoff(Generic[T]):
    """A first-come, first-served queue: `get` blocks until an item is free and gives items to waiting
    callers in the order they called; `put` hands an item to the oldest waiter, or keeps it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: deque[T] = deque()
        self._waiters: deque[_Waiter[T]] = deque()

    def get(self) -> T:
        """The oldest free item; blocks, behind every earlier caller still waiting, until there is one."""
        with self._lock:
            if self._items:  # never while callers wait: `put` hands items to them first
                return self._items.popleft()
            waiter: _Waiter[T] = _Waiter()
            self._waiters.append(waiter)
        try:
            waiter.ready.wait()
        except BaseException:  # e.g. KeyboardInterrupt: an item handed over meanwhile goes to the next caller
            with self._lock:
                handed = waiter not in self._waiters
                if not handed:
                    self._waiters.remove(waiter)
            if handed:
                self.put(waiter.item)
            raise
        return waiter.item

    def waiting(self) -> int:
        """How many callers are waiting in `get` now."""
        with self._lock:
            return len(self._waiters)

    def put(self, item: T) -> None:
        """Hand `item` to the oldest waiting caller, or keep it for the next one."""
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.item = item
                waiter.ready.set()
            else:
                self._items.append(item)
