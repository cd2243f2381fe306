"""memo: an in-process cache with per-entry time-to-live, and a decorator built on it."""

from memo.decorators import cached
from memo.stats import CacheStats
from memo.ttl import TTLCache

__all__ = ["CacheStats", "TTLCache", "cached"]
