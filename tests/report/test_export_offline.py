"""`endstate export` of a run folder written here, with what no replayed control arm has:
a model's thinking blocks (readable and redacted), an infra_error attempt, a second
attempt, and tool arguments that are no JSON object. No Docker: the run is synthetic,
the formats are read back by inspect_ai's own reader here, by Harbor's and atif's validators
in `make peers` (tests/report/test_export_peers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import card, task

from endstate.report import export_run
from endstate.run._results import RunResult, TaskResult, write_results

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
    assert samples["bugfix-b", 1].scores == {}  # infra_error: no score, as no rate counts it
    assert samples["bugfix-b", 1].error.message == "the engine went away"  # Inspect's own word: an error
    assert samples["bugfix-a", 2].error is None
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


def test_the_inspect_log_says_when_the_run_started_and_refuses_an_out_inspect_cannot_open(run, tmp_path):
    from datetime import datetime

    import msgspec
    from inspect_ai.log import read_eval_log

    from endstate.errors import UserError
    from endstate.run import read_results

    result = read_results(run)
    result.tasks = [msgspec.structs.replace(t, wall_s=12.5 + i) for i, t in enumerate(result.tasks)]
    write_results(result, run)
    export_run(run, "inspect", tmp_path / "run.eval")
    stats = read_eval_log(str(tmp_path / "run.eval")).stats
    # Inspect's viewer shows the run's duration from these two; an empty started_at shows NaN.
    took = datetime.fromisoformat(stats.completed_at) - datetime.fromisoformat(stats.started_at)
    assert took.total_seconds() == pytest.approx(12.5 + 13.5 + 14.5)
    with pytest.raises(UserError, match=r"--out .*/x: an Inspect log must end in .eval.*pass --out .*/x.eval"):
        export_run(run, "inspect", tmp_path / "x")
    assert not (tmp_path / "x").exists()



def test_an_export_over_an_earlier_one_is_refused_unless_overwrite(run, tmp_path, cli):
    """What an export wrote may have been edited since: written again only with --overwrite."""
    import shutil

    suite = tmp_path / "suite"
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks" / "bugfix-lru-eviction", suite / "bugfix-lru-eviction")
    for args, edited in (([str(run), "--format", "inspect", "--out", str(tmp_path / "x.eval")], tmp_path / "x.eval"),
                         ([str(run), "--format", "atif", "--out", str(tmp_path / "atif")],
                          tmp_path / "atif" / "bugfix-a.json"),
                         (["--format", "harbor", "--suite", str(suite), "--out", str(tmp_path / "harbor")],
                          tmp_path / "harbor" / "bugfix-lru-eviction" / "instruction.md")):
        assert cli.invoke("export", *args).code == 0
        edited.write_text("edited")
        again = cli.invoke("export", *args)
        assert again.code == 2 and again.out == "", again
        assert again.err.strip().startswith("endstate: error: ") and len(again.err.strip().splitlines()) == 1, again
        assert "already exists (an earlier export, maybe edited since): pass --overwrite" in again.err, again
        assert edited.read_bytes() == b"edited"
        assert cli.invoke("export", *args, "--overwrite").code == 0 and edited.read_bytes() != b"edited"
