"""After a recording, the run says where the cassettes went and the command that replays them.

`record` printed only `results: ...`: where its cassettes were, and that `eval --replay`
takes them, was left for a newcomer to find.
"""

from __future__ import annotations

from pathlib import Path

from endstate.cli._run import _replay_line, _summary
from endstate.run import RunConfig


def test_a_recording_names_its_folder_and_the_replay_command():
    config = RunConfig(model="scripted/null", mode="record", cassettes="cassettes/scripted-null")
    assert _replay_line(Path("my-tasks"), (), config) == (
        "cassettes: cassettes/scripted-null (replay: endstate eval --suite my-tasks --replay cassettes/scripted-null)")


def test_the_replay_command_keeps_the_agent_the_impossible_flag_the_attempts_and_the_tasks():
    """Without --attempts, a replay of a recording of three attempts replays the first alone."""
    config = RunConfig(model="scripted/reference", mode="record", cassettes="c", agent="mini-swe-agent",
                       impossible=True, attempts=3)
    assert _replay_line(Path("tasks"), ("a", "b"), config) == (
        "cassettes: c (replay: endstate eval --suite tasks --agent mini-swe-agent --impossible --attempts 3 "
        "--task a --task b --replay c)")


def test_the_summary_ends_with_the_line(monkeypatch, capsys):
    import endstate.report

    monkeypatch.setattr(endstate.report, "summary_table", lambda result: "TABLE")
    _summary(object(), Path("runs/x"), "cassettes: c (replay: ...)")
    assert capsys.readouterr().out == "\nTABLE\nresults: runs/x/results.json\ncassettes: c (replay: ...)\n"
    _summary(object(), Path("runs/x"))
    assert capsys.readouterr().out == "\nTABLE\nresults: runs/x/results.json\n"
