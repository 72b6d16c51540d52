from datetime import datetime, time

import pytest

from remind import RuleError, Scheduler, parse_rule


def test_day_names_ignore_case_and_repeats():
    rule = parse_rule("on FRI,fri,Mon 06:15")
    assert rule.days == (0, 4)
    assert rule.at == time(6, 15)
    assert rule.next_after(datetime(2024, 3, 12, 9, 0)) == datetime(2024, 3, 15, 6, 15)


def test_same_day_before_the_time_fires_today():
    rule = parse_rule("weekdays 18:00")
    assert rule.next_after(datetime(2024, 3, 13, 17, 59)) == datetime(2024, 3, 13, 18, 0)


def test_exactly_at_the_time_waits_a_week_for_a_single_day():
    rule = parse_rule("on thu 12:00")
    assert rule.next_after(datetime(2024, 3, 14, 12, 0)) == datetime(2024, 3, 21, 12, 0)


def test_weekdays_from_saturday_and_across_month_end():
    rule = parse_rule("weekdays 08:00")
    assert rule.next_after(datetime(2024, 3, 30, 9, 0)) == datetime(2024, 4, 1, 8, 0)
    assert parse_rule("weekends 07:00").days == (5, 6)


@pytest.mark.parametrize("text", ["on mon,,fri 09:00", "on monday 09:00", "on tue 25:00"])
def test_malformed_weekly_rules_raise(text):
    with pytest.raises(RuleError):
        parse_rule(text)


def test_due_between_with_named_days():
    s = Scheduler()
    s.add("gym", "on tue,sat 19:00")
    got = s.due_between(datetime(2024, 3, 1, 0, 0), datetime(2024, 3, 12, 19, 0))
    assert [when.day for when, _ in got] == [2, 5, 9, 12]


@pytest.mark.parametrize("text", ["weekends", "weekends 10:00 11:00", "on mon", "on mon,tue 07:30 08:00",
                                  "every mon 07:30", "fortnightly mon 07:30"])
def test_a_malformed_or_unknown_rule_is_a_rule_error(text):
    with pytest.raises(RuleError):
        parse_rule(text)


def test_weekdays_are_monday_to_friday_and_need_a_time():
    assert parse_rule("weekdays 09:00").days == (0, 1, 2, 3, 4)
    assert parse_rule("Weekdays 09:00").next_after(datetime(2024, 3, 14, 9, 0)) == datetime(2024, 3, 15, 9, 0)
    with pytest.raises(RuleError):
        parse_rule("weekdays")
