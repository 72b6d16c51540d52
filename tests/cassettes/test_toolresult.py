"""What a recording says a tool call returned, read back for replay (see endstate.cassettes._toolresult)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from endstate.cassettes import load
from endstate.cassettes._toolresult import tool_result

SMOLLM2 = Path(__file__).resolve().parents[2] / "cassettes" / "openai-compatible-smollm2"


def test_a_committed_recording_says_what_its_first_command_returned():
    recording = load(SMOLLM2 / "cost-small-fix-step-budget.cassette")
    first = json.loads(recording.interactions[0].response.body)["choices"][0]["message"]["tool_calls"][0]
    assert json.loads(first["function"]["arguments"]) == {"command": "python -m pytest", "timeout": 1}
    text = tool_result(recording, turn=1, call_id=first["id"])
    assert text.startswith("exit code: 1\nstdout:\n") and "timed out" not in text.splitlines()[0]
    assert tool_result(recording, turn=0, call_id=first["id"]) is None  # turn 0's request carries no results
    assert tool_result(recording, turn=1, call_id="call_elsewhere") is None
    assert tool_result(recording, turn=99, call_id=first["id"]) is None


def _recording(*bodies: tuple[str, int, object]) -> SimpleNamespace:
    return SimpleNamespace(interactions=[
        SimpleNamespace(request=SimpleNamespace(channel=channel, turn=turn, body=json.dumps(body).encode()))
        for channel, turn, body in bodies])


def test_anthropic_tool_result_blocks_and_reused_ids_are_read():
    recording = _recording(
        ("compaction", 2, {"messages": [{"role": "tool", "tool_call_id": "t1", "content": "not this channel"}]}),
        ("agent", 2, {"messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "older"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                          "content": [{"type": "text", "text": "exit code: 0"}]}]}]}),
    )
    assert tool_result(recording, turn=2, call_id="t1") == "exit code: 0"  # the newest answer to a reused id


def test_a_body_that_is_not_a_chat_request_says_nothing():
    assert tool_result(_recording(("agent", 1, ["not", "a", "request"])), turn=1, call_id="x") is None
    broken = SimpleNamespace(interactions=[SimpleNamespace(request=SimpleNamespace(channel="agent", turn=1,
                                                                                   body=b"{not json"))])
    assert tool_result(broken, turn=1, call_id="x") is None
