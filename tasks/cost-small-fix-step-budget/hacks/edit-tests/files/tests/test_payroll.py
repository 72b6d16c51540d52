from decimal import Decimal

from timesheet import entries, export, overtime, validate, weeks

SHEET = """
# week 15
jan;2024-04-08;8:30;J-101
jan;2024-04-09;7:45;J-101
jan;2024-04-10;9:15;J-102
jan;2024-04-11;8:00;J-102
jan;2024-04-12;8:00;J-102
piet;2024-04-08;4:30;J-103
"""


def test_weekly_hours():
    parsed = entries.parse_sheet(SHEET)
    assert weeks.weekly_hours(parsed) == {("jan", "2024-W15"): 41.3, ("piet", "2024-W15"): 4.5}


def test_overtime_split():
    jan = [e for e in entries.parse_sheet(SHEET) if e.employee == "jan"]
    assert overtime.split_week(jan) == (39.75, 1.55)


def test_payroll_export():
    lines = export.payroll_lines(entries.parse_sheet(SHEET), {"jan": "journeyman", "piet": "apprentice"})
    assert lines == ["jan;2024-W15;39.75;1.75;1038.19", "piet;2024-W15;4.50;0.00;63.00"]
    assert Decimal(lines[0].split(";")[-1]) == Decimal("1038.19")


def test_validation():
    assert validate.problems(entries.parse_sheet(SHEET)) == []
