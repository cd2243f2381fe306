import pytest
from freezegun import freeze_time

from memo import TTLCache


@pytest.fixture
def clock():
    with freeze_time("2024-03-01 12:00:00") as frozen:
        yield frozen


def test_get_before_and_after_expiry(clock):
    cache = TTLCache(maxsize=10, ttl=10)
    cache["a"] = 1
    clock.tick(9.999)
    assert cache["a"] == 1
    clock.tick(0.001)
    with pytest.raises(KeyError):
        cache["a"]
    assert cache.get("a", "gone") == "gone"


def test_per_entry_ttl(clock):
    cache = TTLCache(maxsize=10, ttl=10)
    cache.set("short", 1, ttl=2)
    cache.set("long", 2)
    clock.tick(5)
    assert cache.get("short") is None
    assert cache["long"] == 2
    assert cache.ttl_remaining("long") == pytest.approx(5)


def test_lru_eviction_of_live_entries(clock):
    cache = TTLCache(maxsize=2, ttl=60)
    cache["a"] = 1
    cache["b"] = 2
    assert cache["a"] == 1  # a is now the most recently used
    cache["c"] = 3
    assert "b" not in cache
    assert cache["a"] == 1 and cache["c"] == 3
    assert cache.stats.evictions == 1


def test_stats_count_hits_and_misses(clock):
    cache = TTLCache(maxsize=4, ttl=1)
    cache["a"] = 1
    cache.get("a")
    cache.get("zzz")
    clock.tick(1)
    cache.get("a")
    assert (cache.stats.hits, cache.stats.misses) == (1, 2)


def test_bad_arguments():
    with pytest.raises(ValueError):
        TTLCache(maxsize=0, ttl=1)
    with pytest.raises(ValueError):
        TTLCache(maxsize=1, ttl=0)
    with pytest.raises(ValueError):
        TTLCache(maxsize=1, ttl=1).set("a", 1, ttl=-1)


def test_expired_entries_are_not_contained(clock):
    cache = TTLCache(maxsize=10, ttl=10)
    cache["a"] = 1
    clock.tick(10)
    assert "a" not in cache
    cache["b"] = 2
    assert "b" in cache


def test_len_counts_live_entries_only(clock):
    cache = TTLCache(maxsize=10, ttl=10)
    cache["a"] = 1
    cache.set("b", 2, ttl=30)
    clock.tick(10)
    assert len(cache) == 1
    clock.tick(20)
    assert len(cache) == 0
    assert not cache


def test_iteration_skips_expired_entries(clock):
    cache = TTLCache(maxsize=10, ttl=10)
    cache["a"] = 1
    cache.set("b", 2, ttl=30)
    cache["c"] = 3
    clock.tick(15)
    assert list(cache) == ["b"]
    assert list(cache.keys()) == ["b"]
    assert dict(cache.items()) == {"b": 2}
    assert list(cache.values()) == [2]


def test_expired_entries_are_evicted_before_live_ones(clock):
    cache = TTLCache(maxsize=2, ttl=100)
    cache["keep"] = 1
    cache.set("brief", 2, ttl=1)
    clock.tick(2)
    cache["new"] = 3
    assert cache["keep"] == 1
    assert cache["new"] == 3
    assert len(cache) == 2
    assert cache.stats.evictions == 0


def test_full_cache_of_expired_entries_keeps_lru_order_for_the_rest(clock):
    cache = TTLCache(maxsize=3, ttl=100)
    cache["old"] = 1
    cache.set("brief", 2, ttl=1)
    cache["young"] = 3
    clock.tick(2)
    cache["x"] = 4  # takes the place of the expired entry
    cache["y"] = 5  # cache full of live entries: evicts the least recently used, "old"
    assert sorted(cache) == ["x", "y", "young"]
    assert cache.stats.evictions == 1
