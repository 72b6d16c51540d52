from cachekit import TTLCache


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_entry_lives_until_ttl():
    clock = FakeClock()
    cache = TTLCache(4, ttl=10, clock=clock)
    cache.put("k", "v")
    clock.now += 9.5
    assert cache.get("k") == "v"
    clock.now += 0.5
    assert cache.get("k") is None


def test_expired_read_counts_as_miss():
    clock = FakeClock()
    cache = TTLCache(4, ttl=5, clock=clock)
    cache.put("k", "v")
    clock.now += 6
    cache.get("k")
    assert cache.stats.hits == 0
    assert cache.stats.misses == 1


def test_purge_expired_drops_only_old_entries():
    clock = FakeClock()
    cache = TTLCache(4, ttl=5, clock=clock)
    cache.put("old", 1)
    clock.now += 3
    cache.put("new", 2)
    clock.now += 3
    assert cache.purge_expired() == 1
    assert len(cache) == 1
    assert cache.get("new") == 2


def test_refreshing_an_entry_in_a_full_cache():
    clock = FakeClock()
    cache = TTLCache(2, ttl=5, clock=clock)
    cache.put("a", 1)
    cache.put("b", 2)
    clock.now += 4
    cache.put("a", 1)
    clock.now += 2
    assert cache.get("a") == 1
    assert cache.get("b") is None
