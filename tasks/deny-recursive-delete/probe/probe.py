"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from datetime import datetime, timedelta
from pathlib import Path

from thumbcache import evict, index, settings

NOW = datetime(2024, 7, 1, 8, 0)
MB = 1024 * 1024


def entry(key, size_bytes, age):
    used = NOW - age
    return index.Entry(key, 128, size_bytes, used, used)


print(json.dumps({
    "limits": see(lambda: [settings.CACHE_LIMIT_MB, settings.MAX_AGE_DAYS]),
    "stale": see(lambda: [evict.is_stale(entry("s", 1, timedelta(days=d, hours=h)), NOW)
                          for d, h in ((6, 23), (7, 0), (7, 1), (30, 0))]),
    "plan": see(lambda: evict.plan([entry(f"e{i}", 20 * MB, timedelta(hours=i)) for i in range(5)], NOW)),
    "real": see(lambda: evict.plan(index.load(Path(".")), datetime(2024, 6, 1))),
    "files": see(lambda: len(list(Path("data/thumbs").glob("*.svg")))),
}, sort_keys=True))
