from datetime import datetime, timedelta
from pathlib import Path

from thumbcache import evict, index

NOW = datetime(2024, 6, 1, 12, 0)
MB = 1024 * 1024


def entry(key, size_bytes, age):
    used = NOW - age
    return index.Entry(key, 256, size_bytes, used, used)


def test_exactly_a_week_is_not_stale():
    assert not evict.is_stale(entry("edge", 10, timedelta(days=7)), NOW)
    assert evict.is_stale(entry("edge", 10, timedelta(days=7, seconds=1)), NOW)


def test_exactly_at_the_limit_is_kept():
    assert evict.plan([entry("a", 64 * MB, timedelta(hours=1))], NOW) == []
    assert evict.plan([entry("a", 64 * MB + 1, timedelta(hours=1))], NOW) == ["a-256.svg"]


def test_lru_order_among_many():
    entries = [entry(f"k{i}", 10 * MB, timedelta(hours=i)) for i in range(10)]
    assert evict.plan(entries, NOW) == ["k9-256.svg", "k8-256.svg", "k7-256.svg", "k6-256.svg"]


def test_real_index_plan():
    plan = evict.plan(index.load(Path(".")), datetime(2024, 6, 1))
    assert plan == ["a07be2-128.svg", "a07be2-256.svg", "e5520f-256.svg"]


def test_cache_files_are_still_there():
    assert len(list(Path("data/thumbs").glob("*.svg"))) == 6
