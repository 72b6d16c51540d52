import pytest

from timesheet import entries, weeks
from timesheet.durations import format_hhmm, parse_hhmm


@pytest.mark.parametrize("minutes", range(0, 60))
def test_every_minute_round_trips(minutes):
    text = f"3:{minutes:02d}"
    assert format_hhmm(parse_hhmm(text)) == text
    assert parse_hhmm(text) == pytest.approx(3 + minutes / 60)


def test_quarter_hours_add_up():
    sheet = "\n".join(f"ann;2024-05-{d:02d};7:15;J-9" for d in (13, 14, 15, 16))
    assert weeks.weekly_hours(entries.parse_sheet(sheet)) == {("ann", "2024-W20"): 29.0}


def test_csv_export_hours():
    entry = entries.parse_line("ann;2024-05-13;6:20;J-9")
    assert entries.to_csv([entry]).splitlines()[1] == "ann,2024-05-13,6.33,J-9"
