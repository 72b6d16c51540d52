"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from datetime import datetime

from remind import RuleError, Scheduler, parse_rule


def rule(text, after):
    r = parse_rule(text)
    return [list(r.days), r.at.isoformat(), r.next_after(after).isoformat()]


def malformed():
    out = []
    for text in ("on 07:00", "on wed,thu 7:60", "weekdays", "on sun,SUN 23:59"):
        try:
            parse_rule(text)
            out.append("accepted")
        except RuleError:
            out.append("refused")
    return out


def due():
    s = Scheduler()
    s.add("swim", "on mon,wed 06:30")
    s.add("shop", "weekends 10:00")
    return [[when.isoformat(), str(name)] for when, name in
            s.due_between(datetime(2024, 4, 1, 0, 0), datetime(2024, 4, 8, 6, 30))]


print(json.dumps({
    "named": see(lambda: rule("on SAT,tue,sat 21:05", datetime(2024, 4, 3, 12, 0))),
    "weekdays": see(lambda: rule("weekdays 07:30", datetime(2024, 4, 5, 8, 0))),
    "weekends": see(lambda: rule("weekends 09:00", datetime(2024, 4, 6, 8, 59))),
    "same_time": see(lambda: rule("on wed 12:00", datetime(2024, 4, 3, 12, 0))),
    "malformed": see(malformed),
    "due": see(due),
}, sort_keys=True))
