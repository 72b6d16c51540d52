"""`endstate export` of a run folder written here, with what no replayed control arm has:
a model's thinking blocks (readable and redacted), an infra_error attempt, a second
attempt, and tool arguments that are no JSON object. No Docker: the run is synthetic,
the formats are checked by ATIF's schema and inspect_ai's own reader."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from report_helpers import card, task

from endstate.report import export_run
from endstate.run._results import RunResult, TaskResult, write_results

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "data" / "atif-v1.6.schema.json").read_text())

THINKING = [{"kind": "thinking", "text": "The bug is in total().", "signature": "sig-1"},
            {"kind": "redacted_thinking", "data": "ENCRYPTED"}]
TRANSCRIPT = [
    {"role": "system", "content": "You are an engineer."},
    {"role": "user", "content": "Fix total()."},
    {"role": "assistant", "content": "", "thinking": THINKING,
     "tool_calls": [{"id": "c1", "name": "bash", "arguments": '{"command": "ls"}'},
                    {"id": "c2", "name": "bash", "arguments": "ls -la"}]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    {"role": "tool", "tool_call_id": "c2", "content": "error: arguments are not JSON"},
    {"role": "assistant", "content": "Done."},
]


@pytest.fixture
def run(tmp_path) -> Path:
    folder = tmp_path / "run"
    second = task("bugfix-a", "fail", attempt=1)
    broken = TaskResult("bugfix-b", "bugfix", "infra_error", reason="the engine went away")
    write_results(RunResult(card(tasks=2, attempts=2), [task("bugfix-a", "pass"), second, broken]), folder)
    (folder / "transcripts").mkdir()
    for stem in ("bugfix-a", "bugfix-a.attempt-1", "bugfix-b"):
        (folder / "transcripts" / f"{stem}.json").write_text(json.dumps(TRANSCRIPT))
    return folder


def test_atif_keeps_readable_thinking_and_counts_the_redacted(run, tmp_path):
    report = export_run(run, "atif", tmp_path / "atif")
    assert sorted(report.exported) == ["bugfix-a", "bugfix-a.attempt-1", "bugfix-b"] and report.missing == {}
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for path in sorted((tmp_path / "atif").iterdir()):
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
        assert not errors, (path.name, errors)
    steps = json.loads((tmp_path / "atif" / "bugfix-a.json").read_text())["steps"]
    agent = steps[2]
    assert agent["source"] == "agent" and agent["reasoning_content"] == "The bug is in total()."
    assert agent["extra"] == {"redacted_thinking_blocks": 1, "unparsed_arguments": {"c2": "ls -la"}}
    assert [c["arguments"] for c in agent["tool_calls"]] == [{"command": "ls"}, {}]
    assert [r["source_call_id"] for r in agent["observation"]["results"]] == ["c1", "c2"]
    assert "reasoning_content" not in steps[3]  # the last answer had no thinking
    broken = json.loads((tmp_path / "atif" / "bugfix-b.json").read_text())["extra"]["endstate"]
    assert (broken["outcome"], broken["reward"]) == ("infra_error", None)


def test_inspect_reads_thinking_attempts_and_the_unscored_attempt(run, tmp_path):
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ContentReasoning

    export_run(run, "inspect", tmp_path / "run.eval")
    log = read_eval_log(str(tmp_path / "run.eval"))
    samples = {(s.id, s.epoch): s for s in log.samples}
    assert sorted(samples) == [("bugfix-a", 1), ("bugfix-a", 2), ("bugfix-b", 1)]
    assert samples["bugfix-a", 1].scores["endstate"].value == "C"
    assert samples["bugfix-a", 2].scores["endstate"].value == "I"
    assert not samples["bugfix-b", 1].scores  # infra_error: no score, as no rate counts it
    (score,) = log.results.scores
    assert (score.scored_samples, score.unscored_samples, score.metrics["accuracy"].value) == (2, 1, 0.5)
    content = samples["bugfix-a", 1].messages[2].content
    assert [type(c) for c in content] == [ContentReasoning, ContentReasoning]  # the message had no text
    assert (content[0].reasoning, content[0].signature, content[0].redacted) == ("The bug is in total().", "sig-1", False)
    assert (content[1].reasoning, content[1].redacted) == ("ENCRYPTED", True)
    calls = samples["bugfix-a", 1].messages[2].tool_calls
    assert calls[1].arguments == {} and "ls -la" in calls[1].parse_error
    assert samples["bugfix-a", 1].messages[5].content == "Done."
    assert log.eval.config.epochs == 2
