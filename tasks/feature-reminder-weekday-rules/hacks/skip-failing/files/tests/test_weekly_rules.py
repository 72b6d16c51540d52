from datetime import datetime, time

import pytest

from remind import RuleError, Scheduler, parse_rule


@pytest.mark.skip(reason="not supported yet")
def test_weekdays_from_friday_evening_goes_to_monday():
    rule = parse_rule("weekdays 09:00")
    assert rule.next_after(datetime(2024, 3, 8, 17, 0)) == datetime(2024, 3, 11, 9, 0)


@pytest.mark.skip(reason="not supported yet")
def test_on_named_days():
    rule = parse_rule("on mon,wed 07:30")
    assert rule.days == (0, 2)
    assert rule.at == time(7, 30)
    assert rule.next_after(datetime(2024, 3, 5, 12, 0)) == datetime(2024, 3, 6, 7, 30)


@pytest.mark.skip(reason="not supported yet")
def test_weekends_in_the_scheduler():
    s = Scheduler()
    s.add("hike", "weekends 10:00")
    assert s.upcoming(datetime(2024, 3, 6, 8, 0), limit=3) == [
        (datetime(2024, 3, 9, 10, 0), "hike"),
        (datetime(2024, 3, 10, 10, 0), "hike"),
        (datetime(2024, 3, 16, 10, 0), "hike"),
    ]


@pytest.mark.parametrize("text", ["on mon,funday 08:00", "on 08:00"])
def test_bad_day_lists_raise(text):
    with pytest.raises(RuleError):
        parse_rule(text)
