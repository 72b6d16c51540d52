import pytest

from remind import RuleError, parse_rule


def test_weekdays_from_friday_evening_goes_to_monday():
    with pytest.raises(RuleError):
        parse_rule("weekdays 09:00")


def test_on_named_days():
    with pytest.raises(RuleError):
        parse_rule("on mon,wed 07:30")


def test_weekends_in_the_scheduler():
    with pytest.raises(RuleError):
        parse_rule("weekends 10:00")


@pytest.mark.parametrize("text", ["on mon,funday 08:00", "on 08:00"])
def test_bad_day_lists_raise(text):
    with pytest.raises(RuleError):
        parse_rule(text)
