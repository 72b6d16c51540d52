"""Thinking, reasoning effort, cached usage and rate limits, each through the official SDK
against the scripted server (no provider is reachable)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import msgspec
import pytest

from endstate.models import Message, ModelError, RequestLimits, RunSettings, ScriptedServer, ToolSchema, open_model
from endstate.models._ratelimit import RequestGate

TASKS = Path(__file__).resolve().parents[2] / "tasks"
TASK = "bugfix-booking-overlap"
BASH = ToolSchema("bash", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}})
THINKING = RunSettings(thinking_budget=1024, max_output_tokens=4096, timeout_s=10)


@pytest.fixture
def server():
    with ScriptedServer(TASKS, auto_cache=True) as running:
        yield running


def _messages_model(server, settings=THINKING, **options):
    return open_model("scripted-anthropic/reference", settings=settings,
                      base_url=server.base_url_for("reference", TASK, wire="messages"), **options)


def _agent_turns(model, turns: int) -> list[Message]:
    """The transcript after `turns` tool-use turns, each tool answering "ok"."""
    messages = [Message("system", "You fix bugs."), Message("user", "Fix the overlap check.")]
    for turn in range(turns):
        completion = model.complete(messages, [BASH], channel="agent", turn=turn)
        messages.append(completion.message)
        messages += [Message("tool", "ok", tool_call_id=call.id) for call in completion.message.tool_calls]
    return messages


def test_thinking_blocks_are_kept_with_signatures_and_sent_back(server):
    model = _messages_model(server)
    try:
        messages = _agent_turns(model, 3)
        fourth = model.complete(messages, [BASH], channel="agent", turn=3)
    finally:
        model.close()
    answers = [m for m in messages if m.role == "assistant"]
    assert [len(m.thinking) for m in answers] == [1, 1, 2]  # turn 2 also carries a redacted block
    first = answers[0].thinking[0]
    assert first.kind == "thinking" and first.text.startswith("Turn 0 of bugfix-booking-overlap") and first.signature
    assert answers[2].thinking[1].kind == "redacted_thinking" and answers[2].thinking[1].data
    assert fourth.message.tool_calls  # the server took every block back as it gave them


@pytest.mark.parametrize("damage", ["dropped", "altered"])
def test_a_turn_whose_thinking_was_dropped_or_altered_is_refused(server, damage):
    model = _messages_model(server)
    try:
        messages = _agent_turns(model, 2)
        last = next(i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant")
        block = messages[last].thinking[0]
        thinking = () if damage == "dropped" else (msgspec.structs.replace(block, text=block.text + " (edited)"),)
        messages[last] = msgspec.structs.replace(messages[last], thinking=thinking)
        with pytest.raises(ModelError) as info:
            model.complete(messages, [BASH], channel="agent", turn=2)
    finally:
        model.close()
    assert info.value.status == 400
    assert ("must start with a thinking block" if damage == "dropped" else "Invalid `signature`") in str(info.value)


def test_prompt_cache_reads_the_conversation_so_far(server):
    settings = msgspec.structs.replace(THINKING, prompt_cache=True)
    model = _messages_model(server, settings)
    try:
        messages = _agent_turns(model, 1)
        second = model.complete(messages, [BASH], channel="agent", turn=1)
    finally:
        model.close()
    usage = second.usage
    assert usage.cached_input_tokens > 0 and usage.cache_write_tokens > 0
    # the whole prompt: what the cache read, what it wrote, and nothing sent uncached
    assert usage.input_tokens == usage.cached_input_tokens + usage.cache_write_tokens


def test_settings_left_off_send_nothing_new(fake_server, json_reply):
    answer = {"id": "m", "type": "message", "role": "assistant", "model": "x", "stop_reason": "end_turn",
              "content": [{"type": "text", "text": "hi"}], "usage": {"input_tokens": 1, "output_tokens": 1}}
    served = fake_server(lambda seen, n: json_reply(answer))
    model = open_model("anthropic/claude-test", settings=RunSettings(timeout_s=5), base_url=served.url,
                       api_key="sk-ant-test")
    try:
        model.complete([Message("system", "s"), Message("user", "hi")], [BASH], channel="agent", turn=0)
    finally:
        model.close()
    body = served.seen[0].body.decode()
    assert "thinking" not in body and "cache_control" not in body and body.count('"system":"s"') == 1
    # A run without the new settings records the header it always did.
    assert msgspec.json.encode(RunSettings()) == (
        b'{"temperature":0.0,"seed":0,"max_retries":0,"timeout_s":120,"max_output_tokens":2048,"tool_choice":"auto"}')


def test_reasoning_effort_is_sent_and_reasoning_and_cached_tokens_are_read(server):
    settings = RunSettings(reasoning_effort="high", timeout_s=10)
    model = open_model("scripted/reference", settings=settings, base_url=server.base_url_for("reference", TASK))
    try:
        long = [Message("system", "x" * 6000), Message("user", "Fix it.")]
        completion = model.complete(long, [BASH], channel="agent", turn=0)
    finally:
        model.close()
    usage = completion.usage
    assert usage.reasoning_tokens == 128 and usage.output_tokens > 128
    assert usage.cached_input_tokens > 0 and usage.cached_input_tokens % 128 == 0


@pytest.mark.parametrize(("field", "value", "says"), [
    ("thinking_budget", 512, "at least 1024"),
    ("thinking_budget", 4096, "below max_output_tokens"),
    ("reasoning_effort", "huge", "one of none, minimal"),
])
def test_bad_reasoning_settings_name_the_field(field, value, says):
    with pytest.raises(ValueError, match=says) as info:
        RunSettings(**{field: value}, max_output_tokens=4096)
    assert str(info.value).startswith(field)


def test_rate_limited_answers_are_waited_out_counted_and_jittered_deterministically():
    slept: list[float] = []
    with ScriptedServer(TASKS, rate_limit_every=2) as server:
        model = _messages_model(server, limits=RequestLimits(rate_limit_waits=3), sleep=slept.append)
        try:
            completions = [model.complete([Message("user", "go")], [BASH], channel="agent", turn=t) for t in range(3)]
        finally:
            model.close()
        assert server.rate_limited == 2
    # requests 2 and 4 were refused: turns 0 and 1 each waited once, with Retry-After: 1 plus jitter
    assert [(c.waits, c.retries) for c in completions] == [(0, 0), (1, 1), (1, 1)]
    gate = RequestGate(RequestLimits(), seed=THINKING.seed)
    assert slept == [gate.delay(1.0, "agent", 1, 0), gate.delay(1.0, "agent", 2, 0)]
    assert all(1.0 <= s <= 1.25 for s in slept) and slept[0] != slept[1]


def test_a_provider_that_stays_limited_fails_after_its_waits(fake_server, json_reply):
    served = fake_server(lambda seen, n: json_reply({"error": {"message": "slow down"}}, 429, **{"retry-after": "2"}))
    slept: list[float] = []
    model = open_model("openai/gpt-test", settings=RunSettings(timeout_s=5), base_url=served.url, api_key="sk-test",
                       limits=RequestLimits(rate_limit_waits=2), sleep=slept.append)
    with pytest.raises(ModelError) as info:
        try:
            model.complete([Message("user", "hi")], [], channel="agent", turn=0)
        finally:
            model.close()
    assert len(served.seen) == 3 and len(slept) == 2 and all(2.0 <= s <= 2.5 for s in slept)
    assert info.value.status == 429 and "waiting it out 2 times" in str(info.value) and "after 2 retries" in str(info.value)


def test_the_ceiling_holds_requests_in_flight(tmp_path):
    gate = RequestGate(RequestLimits(max_concurrent=2, slots=str(tmp_path)))
    lock, inside, most = threading.Lock(), [0], [0]

    def request() -> None:
        with gate.slot():
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.1)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=request) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 2
