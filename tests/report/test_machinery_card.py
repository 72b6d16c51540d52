"""The benchmark card's share of the tasks' wall time that was the harness's own work around the
agent (sandboxes, the seal, grading), from each result's wall and agent seconds."""

from __future__ import annotations

import pytest

from endstate.report import benchmark
from endstate.report._benchmark import load_prices
from tests.report.report_helpers import run, write


def test_the_card_says_how_much_of_the_tasks_wall_was_the_harnesss_work(tmp_path):
    result = run({"bugfix-x": "pass", "bugfix-y": "fail"})
    for t, (wall, agent) in zip(result.tasks, [(10.0, 4.0), (6.0, 0.0)]):  # y: ended before any agent ran
        t.wall_s, t.agent_s = wall, agent
    (row,) = benchmark([write(tmp_path / "run", result)], load_prices(None)).rows
    assert row.card["machinery_share"] == pytest.approx((16 - 4) / 16, abs=1e-3)
    assert row.card["machinery_s_per_task"] == pytest.approx(6.0)
    for t in result.tasks:  # results written before the agent's seconds were kept: not a share of 100%
        t.agent_s = 0.0
    (row,) = benchmark([write(tmp_path / "old", result)], load_prices(None)).rows
    assert row.card["machinery_share"] is None and row.card["machinery_s_per_task"] is None
