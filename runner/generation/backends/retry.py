"""Retry with exponential backoff for transient backend failures, within a deadline per try and in total."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from runner.generation.backends.base import BackendError

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_BACKOFF_S = 60.0
DEADLINE_HINT = "raise backend.request_timeout_s and backend.retry_total_s for slow models"


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    max_retries: int,
    backoff_s: float,
    try_s: float | None = None,
    total_s: float | None = None,
    what: str = "the backend",
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """Await `call()`; on a transient BackendError wait `backoff_s * 2**i` (capped) and try again.

    At most `max_retries` retries follow the first try. Each try is cancelled after `try_s` seconds
    (connect and every read included) and no try runs past `total_s` seconds from the start (waits
    included); a try cut off so is a transient "timeout" error naming `what`. A non-transient error is
    raised at once; when the retries or the time are used up, the last error is raised again with the
    number of tries added.
    """
    loop = asyncio.get_running_loop()
    give_up_at = None if total_s is None else loop.time() + total_s
    tries = 0
    while True:
        tries += 1
        try:
            return await within(call, _limit(try_s, give_up_at, loop.time()), what)
        except BackendError as err:
            if not err.transient:
                raise
            delay = min(backoff_s * 2 ** (tries - 1), MAX_BACKOFF_S)
            out_of_time = give_up_at is not None and loop.time() + delay >= give_up_at
            if tries > max_retries or out_of_time:
                if tries == 1:
                    raise
                why = f"{tries} tries" + (f" in backend.retry_total_s={total_s:g}s" if out_of_time else "")
                raise BackendError(err.kind, f"{err} (gave up after {why})", transient=True) from err
            log.warning("backend %s (try %d of %d), retrying in %.2fs: %s", err.kind, tries, max_retries + 1,
                        delay, err)  # fmt: skip
            await sleep(delay)


def _limit(try_s: float | None, give_up_at: float | None, now: float) -> float | None:
    if give_up_at is None:
        return try_s
    left = max(0.0, give_up_at - now)
    return left if try_s is None else min(try_s, left)


async def within(call: Callable[[], Awaitable[T]], limit: float | None, what: str = "the backend") -> T:
    """`await call()`, cancelled after `limit` seconds (None: no limit) as BackendError("timeout")."""
    try:
        async with asyncio.timeout(limit):
            return await call()
    except TimeoutError as exc:
        raise BackendError(
            "timeout", f"{what} gave no complete answer within {limit:g}s; {DEADLINE_HINT}", transient=True
        ) from exc
