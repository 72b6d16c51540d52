"""The Responses API adapter through the official openai SDK against the scripted server:
stateless requests, encrypted reasoning carried across tool turns, usage; and a core
task recorded through it and replayed strictly."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import msgspec
import pytest
from cli_runner import run_endstate

from endstate.models import Message, ModelError, RunSettings, ScriptedServer, ToolSchema, open_model
from endstate.models._responses import to_input

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"
TASK = "bugfix-booking-overlap"
BASH = ToolSchema("bash", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}})
REASONING = RunSettings(reasoning_effort="medium", timeout_s=10)


@pytest.fixture
def server():
    with ScriptedServer(TASKS, auto_cache=True) as running:
        yield running


def _model(server, policy="reference", settings=REASONING):
    return open_model(f"scripted-responses/{policy}", settings=settings,
                      base_url=server.base_url_for(policy, TASK, wire="responses"))


def _agent_turns(model, turns: int, system: str = "You fix bugs.") -> tuple[list[Message], list]:
    messages = [Message("system", system), Message("user", "Fix the overlap check.")]
    completions = []
    for turn in range(turns):
        completion = model.complete(messages, [BASH], channel="agent", turn=turn)
        completions.append(completion)
        messages.append(completion.message)
        messages += [Message("tool", "ok", tool_call_id=call.id) for call in completion.message.tool_calls]
    return messages, completions


def test_reasoning_items_are_kept_encrypted_and_sent_back(server):
    model = _model(server)
    try:
        messages, completions = _agent_turns(model, 3)
    finally:
        model.close()
    answers = [m for m in messages if m.role == "assistant"]
    assert [[t.kind for t in m.thinking] for m in answers] == [["reasoning"]] * 3
    item = json.loads(answers[0].thinking[0].data)
    assert item["type"] == "reasoning" and item["id"] == "rs_scripted-bugfix-booking-overlap-agent-0"
    assert item["encrypted_content"]
    assert all(m.tool_calls for m in answers)  # turns 1 and 2 were accepted with the items sent back
    # The third request carried both earlier items ahead of their function calls, verbatim.
    sent = to_input(messages[:-2])
    kinds = [i.get("type") for i in sent]
    assert kinds.count("reasoning") == 2
    assert kinds.index("reasoning") < kinds.index("function_call")
    # Billed by its text, a quarter token a character ("Turn 0 of bugfix-booking-overlap (agent): next I
    # call bash." is 62 characters of JSON: 16 tokens); the request asked for no summary.
    assert not item["summary"]
    assert [c.usage.reasoning_tokens for c in completions] == [16, 20, 17]
    assert all(c.usage.output_tokens > c.usage.reasoning_tokens for c in completions)
    assert completions[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("damage", ["dropped", "altered"])
def test_a_turn_whose_reasoning_was_dropped_or_altered_is_refused(server, damage):
    model = _model(server)
    try:
        messages, _ = _agent_turns(model, 2)
        last = next(i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant")
        block = messages[last].thinking[0]
        item = json.loads(block.data)
        item["encrypted_content"] = "x" + item["encrypted_content"][1:]
        thinking = () if damage == "dropped" else (msgspec.structs.replace(block, data=json.dumps(item)),)
        messages[last] = msgspec.structs.replace(messages[last], thinking=thinking)
        with pytest.raises(ModelError) as info:
            model.complete(messages, [BASH], channel="agent", turn=2)
    finally:
        model.close()
    assert info.value.status == 400
    assert ("without its required 'reasoning' item" if damage == "dropped" else "could not be verified") in str(info.value)


def test_requests_are_stateless_and_previous_response_id_is_refused(server):
    url = server.base_url_for("reference", TASK, wire="responses") + "/responses"
    body = {"model": "m", "input": [{"role": "user", "content": "hi"}], "previous_response_id": "resp_1"}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "X-Endstate-Turn": "0"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=10)
    assert info.value.code == 400
    assert "keeps no state" in json.loads(info.value.read())["error"]["message"]


def test_cached_input_is_counted_and_without_effort_no_reasoning_is_asked(server):
    settings = RunSettings(timeout_s=10)
    model = _model(server, settings=settings)
    try:
        short, _ = _agent_turns(model, 1)
        messages, completions = _agent_turns(model, 3, system="You fix bugs. " * 400)
    finally:
        model.close()
    assert all(not m.thinking for m in short + messages if m.role == "assistant")
    assert all(c.usage.reasoning_tokens == 0 for c in completions)
    # Everything but the newest item, in 128-token steps once that prefix reaches 1024 tokens.
    cached = [c.usage.cached_input_tokens for c in completions]
    assert all(c >= 1024 and c % 128 == 0 for c in cached), cached
    assert cached[0] <= cached[1] <= cached[2] and cached[0] < cached[2]
    assert all(c.usage.input_tokens - c.usage.cached_input_tokens < 400 for c in completions)


def test_the_null_arm_answers_done_with_no_calls(server):
    model = _model(server, "null")
    try:
        completion = model.complete([Message("user", "Fix it.")], [BASH], channel="agent", turn=0)
    finally:
        model.close()
    assert completion.message.content == "Done." and not completion.message.tool_calls
    assert completion.finish_reason == "stop"


def _outcome(out: Path) -> list[tuple[str, str]]:
    results = json.loads((out / "results.json").read_text())
    return [(t["task_id"], t["outcome"]) for t in results["tasks"]]


@pytest.mark.docker
def test_a_core_task_through_responses_records_and_replays_strictly(tmp_path):
    common = ["--suite", str(TASKS), "--task", TASK, "--reasoning-effort", "medium"]
    for arm in ("reference", "null"):
        ran = run_endstate("record", "--model", f"scripted-responses/{arm}", *common,
                           "--cassettes", str(tmp_path / arm), "--out", str(tmp_path / f"rec-{arm}"))
        assert _outcome(tmp_path / f"rec-{arm}") == [(TASK, "pass" if arm == "reference" else "fail")], ran.stdout
    cassette = (tmp_path / "reference" / f"{TASK}.cassette").read_bytes()
    ran = run_endstate("eval", "--suite", str(TASKS), "--task", TASK, "--replay", str(tmp_path / "reference"),
                       "--out", str(tmp_path / "rep"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "(replay, strict)" in ran.stdout
    assert _outcome(tmp_path / "rep") == [(TASK, "pass")]
    assert (tmp_path / "reference" / f"{TASK}.cassette").read_bytes() == cassette
    shown = run_endstate("cassette", "show", str(tmp_path / "reference" / f"{TASK}.cassette")).stdout
    assert "/v1/responses -> 200" in shown and "reasoning_effort medium" in shown
