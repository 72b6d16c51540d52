"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from timesheet import entries, weeks
from timesheet.durations import format_hhmm, parse_hhmm

print(json.dumps({
    "round_trip": see(lambda: [format_hhmm(parse_hhmm(f"1:{m:02d}")) for m in (0, 1, 9, 10, 30, 45, 59)]),
    "parsed": see(lambda: [round(parse_hhmm(t), 6) for t in ("0:05", "2:45", "10:09")]),
    "weekly": see(lambda: [[list(k), v] for k, v in sorted(weeks.weekly_hours(entries.parse_sheet(
        "\n".join(f"bo;2024-05-{d:02d};8:45;K-1" for d in (20, 21, 22)))).items())]),
    "csv": see(lambda: entries.to_csv([entries.parse_line("bo;2024-05-20;4:05;K-1")]).splitlines()[1]),
}, sort_keys=True))
