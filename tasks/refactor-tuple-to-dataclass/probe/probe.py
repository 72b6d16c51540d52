"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import dataclasses

import gradebook
from gradebook import stats
from gradebook.curve import curve_to_mean, scale_to_top
from gradebook.export import summary_rows
from gradebook.report import class_report


def summary():
    s = stats.summarize([70, 81.5, 64, 99])
    return {"type": type(s).__name__, "fields": [f.name for f in dataclasses.fields(s)],
            "values": [s.count, s.mean, s.median, s.low, s.high], "tuple": list(s.as_tuple()),
            "is_tuple": isinstance(s, tuple), "exported": gradebook.ScoreSummary is stats.ScoreSummary}


print(json.dumps({
    "summary": see(summary),
    "curve": see(lambda: curve_to_mean([30, 40, 80], 60)),
    "scale": see(lambda: scale_to_top([45, 90], top=100)),
    "rows": see(lambda: [list(row) for row in summary_rows({"ada": [88, 92], "bo": [51]})]),
    "report": see(lambda: class_report({"ada": [88, 92], "bo": [51]}).splitlines()),
}, sort_keys=True))
