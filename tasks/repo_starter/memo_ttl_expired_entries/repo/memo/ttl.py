"""A mapping whose entries expire a fixed time after they were stored."""

import time
from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from typing import Any

from memo.stats import CacheStats

_MISSING = object()


class TTLCache(MutableMapping):
    """A size-bounded mapping whose entries expire `ttl` seconds after they were set.

    An entry stored at time t with time-to-live d is live while `time.monotonic() < t + d` and
    expired from t + d on. Expired entries are never returned. When the cache is full, storing a
    new key evicts the least recently used entry. `ttl` may be overridden per entry with `set()`.
    """

    def __init__(self, maxsize: int, ttl: float) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        if ttl <= 0:
            raise ValueError(f"ttl must be positive, got {ttl}")
        self.maxsize = maxsize
        self.ttl = ttl
        self.stats = CacheStats()
        # key -> (expires_at, value), least recently used first
        self._data: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def set(self, key: Any, value: Any, ttl: float | None = None) -> None:
        """Store `value` under `key`, expiring after `ttl` seconds (default: the cache's ttl)."""
        lifetime = self.ttl if ttl is None else ttl
        if lifetime <= 0:
            raise ValueError(f"ttl must be positive, got {lifetime}")
        if key in self._data:
            del self._data[key]
        elif len(self._data) >= self.maxsize:
            self._data.popitem(last=False)
            self.stats.evictions += 1
        self._data[key] = (time.monotonic() + lifetime, value)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.set(key, value)

    def __getitem__(self, key: Any) -> Any:
        entry = self._data.get(key, _MISSING)
        if entry is _MISSING or self._expired(entry):
            self._data.pop(key, None)
            self.stats.misses += 1
            raise KeyError(key)
        self._data.move_to_end(key)
        self.stats.hits += 1
        return entry[1]

    def __delitem__(self, key: Any) -> None:
        del self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)

    def ttl_remaining(self, key: Any) -> float:
        """Seconds until `key` expires; KeyError when it is missing or already expired."""
        entry = self._data.get(key, _MISSING)
        if entry is _MISSING or self._expired(entry):
            raise KeyError(key)
        return entry[0] - time.monotonic()

    def clear(self) -> None:
        """Remove every entry (the statistics are kept)."""
        self._data.clear()

    def __repr__(self) -> str:
        return f"TTLCache(maxsize={self.maxsize}, ttl={self.ttl}, entries={len(self._data)})"

    @staticmethod
    def _expired(entry: tuple[float, Any]) -> bool:
        return time.monotonic() >= entry[0]
