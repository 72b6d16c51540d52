from cachekit import LRUCache, TTLCache


def test_update_in_full_cache_of_three_keeps_every_entry():
    cache = LRUCache(3)
    for key in ("user:1", "user:2", "user:3"):
        cache.put(key, key.upper())
    cache.put("user:2", "changed")
    assert len(cache) == 3
    assert list(cache) == ["user:1", "user:3", "user:2"]
    assert cache.stats.evictions == 0


def test_update_in_cache_of_one_is_not_an_eviction():
    evicted = []
    cache = LRUCache(1, on_evict=lambda k, v: evicted.append(k))
    cache.put(42, "old")
    cache.put(42, "new")
    assert cache.get(42) == "new"
    assert evicted == []
    assert cache.stats.evictions == 0


def test_integer_keys_survive_an_update():
    cache = LRUCache(3)
    for key in (1, 2, 3):
        cache.put(key, key * 100)
    cache.put(1, 111)
    assert 2 in cache
    cache.put(4, 400)
    assert list(cache) == [3, 1, 4]


def test_repeated_updates_do_not_drain_the_cache():
    cache = LRUCache(3)
    for key in ("x", "y", "z"):
        cache.put(key, 0)
    for n in range(5):
        cache.put("z", n)
    assert sorted(cache) == ["x", "y", "z"]
    assert cache.get("z") == 4


def test_ttl_refresh_with_capacity_three():
    now = [0.0]
    cache = TTLCache(3, ttl=10, clock=lambda: now[0])
    for key in ("p", "q", "r"):
        cache.put(key, key)
    cache.put("q", "q2")
    now[0] = 5.0
    assert [cache.get(k) for k in ("p", "q", "r")] == ["p", "q2", "r"]
