"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import tempfile
from pathlib import Path

from weatherd import config


def ini(poll):
    return f"[station]\nid = EHAM\n\n[polling]\npoll_minutes = {poll}\n"


def first_wins():
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "one.ini").write_text(ini(15))
        Path(folder, "two.ini").write_text(ini(45))
        return config.load(("none.ini", "one.ini", "two.ini"), Path(folder)).poll_minutes


print(json.dumps({
    "parse": see(lambda: [see(lambda p=p: config.parse(ini(p)).poll_minutes) for p in (-1, 0, 2, 4, 5, 7, 90)]),
    "repo": see(lambda: config.load(("config/weatherd.ini",), Path(".")).poll_minutes),
    "first_wins": see(first_wins),
}, sort_keys=True))
