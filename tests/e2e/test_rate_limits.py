"""A provider that rate-limits: the scripted server answers every third request with 429
and Retry-After: 1. At -j 4 with a ceiling of 2 requests in flight, every task ends as it
does without the limits, the card counts the waits, nothing is an error, and the
recording (429s included) replays strictly to the same end states without sleeping."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import TASKS

from endstate.report import benchmark
from endstate.report._benchmark import load_prices
from endstate.run import read_results

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ONLY = ["bugfix-booking-overlap", "cost-small-fix-step-budget", "deny-recursive-delete", "feature-recipe-scaling"]


def _ends(folder):
    return {t.task_id: (t.outcome, t.tree_hash) for t in read_results(folder).tasks}


def test_rate_limited_run_ends_as_an_unlimited_one(tmp_path):
    tasks = [arg for task in ONLY for arg in ("--task", task)]
    plain = run_endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), *tasks, "-j", "4",
                         "--out", str(tmp_path / "plain"))
    assert plain.code == 0, plain
    limited = run_endstate("record", "--model", "scripted/reference", "--suite", str(TASKS), *tasks, "-j", "4",
                           "--max-concurrent", "2", "--cassettes", str(tmp_path / "cassettes"),
                           "--out", str(tmp_path / "limited"), env={"ENDSTATE_SCRIPTED_RATE_LIMIT": "3"})
    assert limited.code == 0, limited
    assert _ends(tmp_path / "limited") == _ends(tmp_path / "plain")
    result = read_results(tmp_path / "limited")
    assert {t.outcome for t in result.tasks} == {"pass"}
    waits = sum(t.counters.rate_limit_waits for t in result.tasks)
    steps = sum(t.counters.steps for t in result.tasks)
    assert waits > 0 and waits == (steps + waits) // 3  # of all requests made, every third was refused
    assert result.card.max_concurrent == 2
    (row,) = benchmark([tmp_path / "limited"], load_prices(None)).rows
    assert row.card["rate_limit_waits"] == waits and row.card["model_retries"] == waits

    replayed = run_endstate("eval", "--suite", str(TASKS), *tasks, "-j", "4", "--replay", str(tmp_path / "cassettes"),
                            "--out", str(tmp_path / "replayed"))
    assert replayed.code == 0, replayed
    assert _ends(tmp_path / "replayed") == _ends(tmp_path / "plain")
    assert sum(t.counters.rate_limit_waits for t in read_results(tmp_path / "replayed").tasks) == waits
