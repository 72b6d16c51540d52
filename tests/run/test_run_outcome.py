"""Run outcomes are a closed vocabulary, written to results.json as the same strings as ever."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from endstate.run import RunOutcome, TaskResult, read_results

ROOT = Path(__file__).resolve().parents[2]


def test_an_enum_outcome_encodes_as_the_plain_string():
    as_enum = TaskResult("t", "bugfix", outcome=RunOutcome.INFRA_ERROR)
    as_text = TaskResult("t", "bugfix", outcome="infra_error")
    assert msgspec.json.encode(as_enum) == msgspec.json.encode(as_text)


@pytest.mark.parametrize("path", sorted((ROOT / "bench" / "results").rglob("results.json")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_results_read_as_run_outcomes(path):
    tasks = read_results(path).tasks
    assert tasks and all(isinstance(t.outcome, RunOutcome) for t in tasks)


def test_an_unknown_outcome_is_refused():
    with pytest.raises(msgspec.ValidationError, match="outcome"):
        msgspec.json.decode(b'{"task_id": "t", "category": "bugfix", "outcome": "maybe"}', type=TaskResult)


def test_an_outcome_prints_as_its_value():
    assert f"{RunOutcome.PASS} {RunOutcome.INFRA_ERROR!s}" == "pass infra_error"
