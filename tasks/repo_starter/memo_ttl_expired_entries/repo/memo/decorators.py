"""`@cached`: memoise a function's results in a TTLCache."""

import functools
from collections.abc import Callable, Hashable
from typing import Any

from memo.ttl import TTLCache


def make_key(args: tuple, kwargs: dict) -> Hashable:
    """Return a hashable key for a call; keyword order does not matter."""
    if not kwargs:
        return args
    return (args, tuple(sorted(kwargs.items())))


def cached(maxsize: int = 128, ttl: float = 60.0) -> Callable:
    """Decorate a function so that its results are reused for `ttl` seconds.

    The wrapped function gets a `cache` attribute (the TTLCache) and a `cache_clear()` function.
    Calls whose arguments are not hashable are passed through uncached.
    """

    def decorate(func: Callable) -> Callable:
        cache = TTLCache(maxsize=maxsize, ttl=ttl)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = make_key(args, kwargs)
            try:
                return cache[key]
            except KeyError:
                pass
            except TypeError:
                return func(*args, **kwargs)
            result = func(*args, **kwargs)
            cache[key] = result
            return result

        wrapper.cache = cache
        wrapper.cache_clear = cache.clear
        return wrapper

    return decorate
