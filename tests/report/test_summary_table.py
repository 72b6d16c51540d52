"""The run's summary table: each long reason under it is named by its attempt, as its row is."""

from __future__ import annotations

from report_helpers import run

from endstate.report import summary_table


def test_long_reasons_under_the_table_name_their_attempt():
    """Two attempts failing alike once printed the same `task: why` line twice, neither saying which."""
    result = run({"bugfix-a": ["fail", "fail"]})
    for t in result.tasks:
        t.reason = "tests: 3 of 10 failed: failing: " + ", ".join(f"test_{n}" for n in range(12))
    lines = summary_table(result).splitlines()
    assert "bugfix-a: tests_pass: tests: 3 of 10 failed" in "\n".join(lines)
    assert any(line.startswith("bugfix-a.attempt-1: tests_pass: tests: 3 of 10") for line in lines)
