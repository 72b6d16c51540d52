import pytest

from timesheet.durations import format_hhmm, parse_hhmm


@pytest.mark.parametrize("text, hours", [("8:00", 8.0), ("07:45", 7.45), ("0:30", 0.3), ("10:15", 10.15)])
def test_parse(text, hours):
    assert parse_hhmm(text) == hours


def test_round_trip():
    assert format_hhmm(parse_hhmm("6:40")) == "6:40"


def test_refuses_bad_minutes():
    with pytest.raises(ValueError):
        parse_hhmm("7:75")
