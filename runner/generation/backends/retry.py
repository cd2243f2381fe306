"""Retry with exponential backoff for transient backend failures."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from runner.generation.backends.base import BackendError

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_BACKOFF_S = 60.0


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    max_retries: int,
    backoff_s: float,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """Await `call()`; on a transient BackendError wait `backoff_s * 2**i` (capped) and try again.

    At most `max_retries` retries follow the first try. A non-transient error is raised at once; when
    the retries are used up, the last error is raised again with the number of tries added.
    """
    tries = 0
    while True:
        tries += 1
        try:
            return await call()
        except BackendError as err:
            if not err.transient:
                raise
            if tries > max_retries:
                if tries == 1:
                    raise
                raise BackendError(err.kind, f"{err} (gave up after {tries} tries)", transient=True) from err
            delay = min(backoff_s * 2 ** (tries - 1), MAX_BACKOFF_S)
            log.warning("backend %s (try %d of %d), retrying in %.2fs: %s", err.kind, tries, max_retries + 1,
                        delay, err)  # fmt: skip
            await sleep(delay)
