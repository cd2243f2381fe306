"""Hit / miss counters of a cache."""

from dataclasses import dataclass


@dataclass
class CacheStats:
    """Counts of lookups that found a live entry (hits), lookups that did not (misses), and
    evictions: live entries dropped to make room for a new key (dropping an expired entry is not an
    eviction)."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0

    @property
    def hit_rate(self) -> float:
        """Fraction of lookups that were hits; 0.0 before the first lookup."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0

    def reset(self) -> None:
        """Set every counter back to zero."""
        self.hits = self.misses = self.evictions = 0
