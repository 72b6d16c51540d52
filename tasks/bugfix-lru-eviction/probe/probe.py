"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from cachekit import LRUCache, TTLCache


def update_when_full():
    evicted = []
    cache = LRUCache(3, on_evict=lambda k, v: evicted.append(k))
    for key in ("a", "b", "c"):
        cache.put(key, key * 2)
    cache.put("a", "new")
    cache.put("d", "dd")
    return {"keys": list(cache), "evicted": evicted, "evictions": cache.stats.evictions, "a": cache.get("a")}


def update_capacity_one():
    cache = LRUCache(1)
    cache.put("k", 1)
    cache.put("k", 2)
    return [len(cache), cache.get("k"), cache.stats.evictions]


def ttl():
    now = [0.0]
    cache = TTLCache(2, ttl=10, clock=lambda: now[0])
    cache.put("x", 1)
    cache.put("y", 2)
    cache.put("x", 3)
    now[0] = 4.0
    return [cache.get("x"), cache.get("y"), len(cache)]


print(json.dumps({"full": see(update_when_full), "one": see(update_capacity_one), "ttl": see(ttl)},
                 sort_keys=True))
