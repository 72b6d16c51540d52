"""Streamed answers from the scripted server, parsed by the official SDKs' stream helpers:
each wire format streams what its non-streamed endpoint returns, and a recorded stream
replays to the same parsed answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from endstate.cassettes import BUFFERED_STREAM_HEADER, CassetteJob, load, open_session
from endstate.models import ScriptedServer

TASKS = Path(__file__).resolve().parents[2] / "tasks"
TASK = "bugfix-booking-overlap"
BASH_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}}
WIRES = ("chat", "messages", "responses")


def _headers(turn: int) -> dict[str, str]:
    return {"X-Endstate-Channel": "agent", "X-Endstate-Turn": str(turn), BUFFERED_STREAM_HEADER: "1"}


def _client(wire: str, url: str) -> Any:
    options = {"api_key": "not-needed", "base_url": url, "max_retries": 0, "timeout": 10}
    return anthropic.Anthropic(**options) if wire == "messages" else openai.OpenAI(**options)


def _ask(wire: str, client: Any, turn: int, *, stream: bool) -> dict[str, Any]:
    """One answer of turn `turn`, as the SDK parsed it (streamed: through its stream helper)."""
    prompt = "Fix the overlap check."
    if wire == "messages":
        params = {"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": prompt}],
                  "tools": [{"name": "bash", "description": "Run a command.", "input_schema": BASH_SCHEMA}],
                  "thinking": {"type": "enabled", "budget_tokens": 1024}, "extra_headers": _headers(turn)}
        if not stream:
            return client.messages.create(**params).to_dict()
        with client.messages.stream(**params) as events:
            return events.get_final_message().to_dict()
    if wire == "responses":
        params = {"model": "m", "input": [{"role": "user", "content": prompt}], "store": False,
                  "include": ["reasoning.encrypted_content"], "reasoning": {"effort": "low", "summary": "auto"},
                  "tools": [{"type": "function", "name": "bash", "description": "Run a command.",
                             "parameters": BASH_SCHEMA, "strict": False}], "extra_headers": _headers(turn)}
        if not stream:
            return client.responses.create(**params).to_dict()
        with client.responses.stream(**params) as events:
            return events.get_final_response().to_dict()
    params = {"model": "m", "messages": [{"role": "user", "content": prompt}],
              "tools": [{"type": "function", "function": {"name": "bash", "description": "Run a command.",
                                                          "parameters": BASH_SCHEMA}}],
              "extra_headers": _headers(turn)}
    if not stream:
        return client.chat.completions.create(**params).to_dict()
    with client.chat.completions.stream(**params, stream_options={"include_usage": True}) as events:
        return events.get_final_completion().to_dict()


def _answer(wire: str, parsed: dict[str, Any]) -> Any:
    """What an adapter reads of a parsed answer: content, calls, reasoning, stop and usage."""
    if wire == "chat":
        choice = parsed["choices"][0]
        message = {k: choice["message"].get(k) for k in ("content", "tool_calls")}
        for call in message["tool_calls"] or ():  # the helper's own bookkeeping and parse of the arguments
            call.pop("index", None)
            call["function"].pop("parsed_arguments", None)
        return message, choice["finish_reason"], parsed["usage"]
    if wire == "messages":
        blocks = [{k: v for k, v in b.items() if k != "parsed_output"} for b in parsed["content"]]
        return blocks, parsed["stop_reason"], parsed["usage"]
    items = [{k: v for k, v in i.items() if k != "parsed_arguments"} for i in parsed["output"]]
    for item in items:
        for part in item.get("content") or ():
            part.pop("parsed", None)
    return items, parsed["status"], parsed["usage"]


@pytest.fixture(scope="module")
def server():
    with ScriptedServer(TASKS) as running:
        yield running


@pytest.mark.parametrize("wire", WIRES)
def test_a_streamed_answer_is_the_answer_the_endpoint_returns_whole(server, wire):
    client = _client(wire, server.base_url_for("reference", TASK, wire=wire))
    try:
        for turn in range(3):
            streamed, whole = _ask(wire, client, turn, stream=True), _ask(wire, client, turn, stream=False)
            assert _answer(wire, streamed) == _answer(wire, whole), turn
    finally:
        client.close()
    if wire == "messages":  # turn 2 carries signed thinking, a redacted block and a tool call
        assert [b["type"] for b in _answer(wire, streamed)[0]] == ["thinking", "redacted_thinking", "tool_use"]
    if wire == "responses":
        assert [i["type"] for i in _answer(wire, streamed)[0]][0] == "reasoning"


def _events(body: bytes) -> list[str]:
    return [line.split(": ", 1)[1] for line in body.decode().splitlines() if line.startswith("event: ")]


def test_the_event_sequences_are_the_providers_own(server):
    client = _client("messages", server.base_url_for("reference", TASK, wire="messages"))
    raw = client.messages.with_raw_response.create(
        model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}], stream=True,
        extra_headers=_headers(0))
    names = _events(raw.http_response.read())
    client.close()
    assert names[:2] == ["message_start", "ping"] and names[-2:] == ["message_delta", "message_stop"]
    assert {"content_block_start", "content_block_delta", "content_block_stop"} <= set(names)
    client = _client("responses", server.base_url_for("reference", TASK, wire="responses"))
    raw = client.responses.with_raw_response.create(model="m", input="hi", stream=True, extra_headers=_headers(0))
    names = _events(raw.http_response.read())
    client.close()
    assert names[:2] == ["response.created", "response.in_progress"] and names[-1] == "response.completed"
    assert "response.output_item.added" in names and "response.function_call_arguments.delta" in names


@pytest.mark.parametrize("wire", WIRES)
def test_a_recorded_stream_replays_to_the_same_parsed_answers(server, tmp_path, wire):
    header = {"model": f"scripted/{wire}", "task_id": TASK, "task_hash": "a" * 64, "image_id": "sha256:img",
              "endstate_version": "0.1.0"}
    path = tmp_path / f"{wire}.cassette"
    answers = {}
    for mode in ("record", "replay"):
        url = (server.base_url_for("reference", TASK, wire=wire) if mode == "record"
               else f"http://127.0.0.1:9/scripted/reference/{TASK}{'' if wire == 'messages' else '/v1'}")
        client = _client(wire, url)
        try:
            with open_session(CassetteJob(mode=mode, path=str(path), header=header), task_id=TASK,
                              state_dir=tmp_path / mode) as tape:
                answers[mode] = [_ask(wire, client, turn, stream=True) for turn in range(3)]
        finally:
            client.close()
        assert tape.divergence is None
    assert answers["replay"] == answers["record"]
    recording = load(path)
    assert len(recording.interactions) == 3
    body = recording.interactions[0].response.body
    assert body.startswith(b"event: " if wire != "chat" else b"data: ") and body.rstrip().endswith(
        b"[DONE]" if wire == "chat" else b"}")
    assert json.loads(recording.interactions[0].request.body)["stream"] is True
