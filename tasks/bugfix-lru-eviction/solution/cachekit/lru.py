"""A fixed-capacity cache that drops the least recently used entry first."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator

from cachekit.stats import CacheStats

_MISSING = object()

EvictHook = Callable[[Hashable, Any], None]


class LRUCache:
    """Maps keys to values, holding at most `capacity` entries.

    Reading or writing a key makes it the most recently used one. When a new
    key arrives and the cache is full, the least recently used entry is
    evicted and `on_evict(key, value)` is called for it.
    """

    def __init__(self, capacity: int, on_evict: EvictHook | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._on_evict = on_evict
        self.stats = CacheStats()

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        # A membership test is not a use: it neither counts nor refreshes.
        return key in self._data

    def __iter__(self) -> Iterator[Hashable]:
        """Keys from least to most recently used."""
        return iter(list(self._data))

    def get(self, key: Hashable, default: Any = None) -> Any:
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            self.stats.misses += 1
            return default
        self.stats.hits += 1
        self._data.move_to_end(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        if key in self._data:
            self._data.move_to_end(key)
        elif len(self._data) >= self._capacity:
            self._evict_oldest()
        self._data[key] = value

    def pop(self, key: Hashable, default: Any = None) -> Any:
        return self._data.pop(key, default)

    def clear(self) -> None:
        self._data.clear()

    def resize(self, capacity: int) -> None:
        """Change the capacity, evicting the oldest entries if it shrank."""
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self._capacity = capacity
        while len(self._data) > self._capacity:
            self._evict_oldest()

    def _evict_oldest(self) -> None:
        key, value = self._data.popitem(last=False)
        self.stats.evictions += 1
        if self._on_evict is not None:
            self._on_evict(key, value)
