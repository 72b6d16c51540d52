"""The scripted control arms in Claude Code's, Codex's and OpenCode's own tools, over HTTP to the real server.

The request offers the agent's tools (as the real programs do); the answer plays the task's
reference trajectory one of those tool calls a turn, then "Done."; adaptive thinking, as
Claude Code asks for it, is answered with signed thinking.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from endstate.models.scripted import ScriptedServer
from endstate.models.scripted._bashblock import as_command
from endstate.models.scripted._vocab import native_calls

TASKS = Path(__file__).resolve().parents[2] / "tasks"
TASK = "bugfix-invoice-rounding"
CLAUDE_TOOLS = [{"name": name, "input_schema": {"type": "object"}} for name in ("Bash", "Read", "Write", "Edit", "Agent")]
CODEX_TOOLS = [{"type": "function", "name": name, "parameters": {"type": "object"}}
               for name in ("exec_command", "write_stdin")]


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(TASKS) as running:
        yield running


def _post(server, policy: str, wire: str, body: dict, turn: int) -> tuple[int, dict]:
    path = {"messages": "v1/messages", "responses": "v1/responses", "chat": "v1/chat/completions"}[wire]
    request = urllib.request.Request(f"{server.base_url}/scripted/{policy}/{TASK}/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-Endstate-Turn": str(turn)})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _claude(turn: int, *, policy: str = "reference", thinking: dict | None = None, messages: list | None = None):
    body = {"model": "m", "max_tokens": 32000, "system": "Working directory: /workspace\n", "tools": CLAUDE_TOOLS,
            "messages": messages or [{"role": "user", "content": "fix it"}]}
    if thinking is not None:
        body["thinking"] = thinking
    return body


def test_claude_code_gets_the_reference_as_its_own_tool_calls_then_done(server):
    played = []
    for turn in range(12):
        status, answer = _post(server, "reference", "messages", _claude(turn), turn)
        assert status == 200, answer
        uses = [block for block in answer["content"] if block["type"] == "tool_use"]
        if not uses:
            assert answer["stop_reason"] == "end_turn" and answer["content"][-1]["text"] == "Done."
            break
        played.append((uses[0]["name"], uses[0]["input"]))
    money = "/workspace/invoicing/money.py"
    assert [name for name, _ in played] == ["Bash", "Read", "Read", "Edit", "Edit", "Bash"]
    # Claude Code's own grep and find (multi-threaded: their output order varies) are set aside.
    assert played[0][1]["command"] == "unset -f grep find 2>/dev/null; python -m pytest -q tests"
    assert played[1][1] == {"file_path": money} and played[2][1] == {"file_path": "/workspace/invoicing/tax.py"}
    assert played[3][1]["file_path"] == money and "ROUND_HALF_UP" in played[3][1]["new_string"]


def test_claude_code_reads_a_file_before_it_edits_or_overwrites_it():
    calls = [("edit_file", {"path": "a.py", "old": "x", "new": "y"}), ("edit_file", {"path": "a.py", "old": "y", "new": "z"}),
             ("bash", {"command": "true"}), ("write_file", {"path": "a.py", "content": "w"}),
             ("write_file", {"path": "/abs/new.py", "content": "n"})]
    names = [(name, args.get("file_path")) for name, args in native_calls("claude-code", calls, {"system": "x"})]
    assert names == [("Read", "/workspace/a.py"), ("Edit", "/workspace/a.py"), ("Edit", "/workspace/a.py"),
                     ("Bash", None), ("Read", "/workspace/a.py"), ("Write", "/workspace/a.py"),
                     ("Read", "/abs/new.py"), ("Write", "/abs/new.py")]


def test_the_null_arm_stops_claude_code_at_once(server):
    status, answer = _post(server, "null", "messages", _claude(0), 0)
    assert status == 200 and [b["type"] for b in answer["content"]] == ["text"] and answer["content"][0]["text"] == "Done."


def test_adaptive_thinking_is_answered_with_signed_thinking_and_may_be_left_out_when_sent_back(server):
    status, first = _post(server, "reference", "messages", _claude(0, thinking={"type": "adaptive"}), 0)
    assert status == 200 and [b["type"] for b in first["content"]] == ["thinking", "text", "tool_use"]
    assert first["content"][0]["signature"]
    without = [b for b in first["content"] if b["type"] != "thinking"]
    use = without[-1]
    messages = [{"role": "user", "content": "fix it"}, {"role": "assistant", "content": without},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "ok"}]}]
    status, _ = _post(server, "reference", "messages", _claude(1, thinking={"type": "adaptive"}, messages=messages), 1)
    assert status == 200
    # With a budget the API demands the thinking back; an altered signature is refused either way.
    enabled = {"type": "enabled", "budget_tokens": 2048}
    status, refused = _post(server, "reference", "messages", _claude(1, thinking=enabled, messages=messages), 1)
    assert status == 400 and "must start with a thinking block" in refused["error"]["message"]
    forged = [{**first["content"][0], "thinking": "edited"}, *without]
    messages[1] = {"role": "assistant", "content": forged}
    status, refused = _post(server, "reference", "messages", _claude(1, thinking={"type": "adaptive"}, messages=messages), 1)
    assert status == 400 and "Invalid `signature`" in refused["error"]["message"]
    status, refused = _post(server, "reference", "messages", _claude(0, thinking={"type": "adaptive", "budget_tokens": 2048}), 0)
    assert status == 400 and "budget_tokens" in refused["error"]["message"]


def test_codex_gets_each_call_as_a_command_of_its_shell_tool(server):
    body = {"model": "m", "input": [{"type": "message", "role": "user", "content": "fix it"}], "tools": CODEX_TOOLS}
    commands = []
    for turn in range(12):
        status, answer = _post(server, "reference", "responses", body, turn)
        assert status == 200, answer
        calls = [item for item in answer["output"] if item["type"] == "function_call"]
        if not calls:
            assert answer["output"][-1]["content"][0]["text"] == "Done."
            break
        assert calls[0]["name"] == "exec_command"
        commands.append(json.loads(calls[0]["arguments"])["cmd"])
    assert commands[:2] == ["python -m pytest -q tests", as_command("read_file", {"path": "invoicing/money.py"})]
    assert len(commands) == 6 and commands[-1] == "python -m pytest -q tests"


def test_a_request_without_an_agents_tools_gets_endstates_own(server):
    body = {"model": "m", "max_tokens": 100, "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "fix it"}]}
    status, answer = _post(server, "reference", "messages", body, 0)
    assert status == 200 and [b["name"] for b in answer["content"] if b["type"] == "tool_use"] == ["bash"]


OPENCODE_TOOLS = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
                  for name in ("bash", "edit", "glob", "read", "write")]


def test_opencode_gets_each_call_as_a_command_of_its_bash_tool(server):
    body = {"model": "m", "messages": [{"role": "user", "content": "fix it"}], "tools": OPENCODE_TOOLS}
    commands = []
    for turn in range(12):
        status, answer = _post(server, "reference", "chat", body, turn)
        assert status == 200, answer
        message = answer["choices"][0]["message"]
        if not message.get("tool_calls"):
            assert message["content"] == "Done."
            break
        call = message["tool_calls"][0]["function"]
        assert call["name"] == "bash" and json.loads(call["arguments"])["description"] == "Run a command"
        commands.append(json.loads(call["arguments"])["command"])
    assert commands[:2] == ["python -m pytest -q tests", as_command("read_file", {"path": "invoicing/money.py"})]
    assert len(commands) == 6 and commands[-1] == "python -m pytest -q tests"
    # endstate's own loop on the same wire (bash, read_file, ...) still gets its own tools.
    own = {**body, "tools": [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                             for n in ("bash", "read_file", "write_file", "edit_file")]}
    status, answer = _post(server, "reference", "chat", own, 1)
    assert status == 200 and answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "read_file"
