"""The OpenAI adapter against local servers: request shape, answer mapping, failures."""

from __future__ import annotations

import time

import pytest

from endstate.models import Message, ModelError, RunSettings, ToolCall, ToolSchema, open_model
from endstate.models._openai import to_wire

READ = ToolSchema(name="read_file", description="read a file", parameters={"type": "object", "properties": {}})

ANSWER = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
}

# A retry hint the SDK honours, so retries in tests take milliseconds, not seconds.
QUICK = {"retry-after-ms": "1"}
KEY = "sk-test-key-1234"


def _compat(url: str, settings: RunSettings, **kwargs):
    return open_model("openai-compatible/m", settings=settings, base_url=url + "/v1", api_key=KEY, **kwargs)


def _ask(model, turn: int = 3, channel: str = "agent"):
    try:
        return model.complete([Message(role="user", content="hi")], [READ], channel=channel, turn=turn)
    finally:
        model.close()


def test_answer_maps_to_a_completion(fake_server, json_reply, fast):
    server = fake_server(lambda seen, n: json_reply(ANSWER))
    completion = _ask(_compat(server.url, fast))
    assert completion.message == Message(
        role="assistant", tool_calls=(ToolCall(id="c1", name="read_file", arguments='{"path": "a.py"}'),)
    )
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (11, 7)
    assert completion.finish_reason == "tool_calls"
    assert completion.retries == 0


def test_missing_usage_counts_zero_and_object_arguments_become_json(fake_server, json_reply, fast):
    answer = {
        "choices": [
            {
                "message": {"content": "hi", "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {"a": 1}}}]},
                "finish_reason": "stop",
            }
        ]
    }
    server = fake_server(lambda seen, n: json_reply(answer))
    completion = _ask(_compat(server.url, fast))
    assert completion.usage.input_tokens == completion.usage.output_tokens == 0
    assert completion.message.tool_calls == (ToolCall(id="x", name="f", arguments='{"a": 1}'),)


def test_request_carries_headers_and_settings(fake_server, json_reply):
    server = fake_server(lambda seen, n: json_reply(ANSWER))
    settings = RunSettings(temperature=0.3, seed=7, max_output_tokens=99, timeout_s=5)
    _ask(_compat(server.url, settings, extra_headers={"X-Gateway": "g1"}), turn=5, channel="compaction")
    (seen,) = server.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["x-endstate-channel"] == "compaction"
    assert seen.headers["x-endstate-turn"] == "5"
    assert seen.headers["x-gateway"] == "g1"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    body = seen.json()
    assert body["model"] == "m"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.3, 7, 99)
    assert "max_completion_tokens" not in body and "parallel_tool_calls" not in body and "stream" not in body
    assert body["tools"] == [
        {"type": "function", "function": {"name": "read_file", "description": "read a file",
                                          "parameters": {"type": "object", "properties": {}}}}
    ]
    assert body["tool_choice"] == "auto"


def test_openai_proper_sends_max_completion_tokens(fake_server, json_reply, fast):
    server = fake_server(lambda seen, n: json_reply(ANSWER))
    model = open_model("openai/gpt-4.1", settings=fast, base_url=server.url + "/v1", api_key=KEY)
    model.complete([Message(role="user", content="hi")], [READ], channel="agent", turn=0, tool_choice="required")
    model.close()
    body = server.seen[0].json()
    assert body["max_completion_tokens"] == 2048 and "max_tokens" not in body
    assert body["tool_choice"] == "required"


def test_no_tools_sends_no_tool_choice_and_no_seed_when_unset(fake_server, json_reply):
    server = fake_server(lambda seen, n: json_reply(ANSWER))
    model = _compat(server.url, RunSettings(seed=None, timeout_s=5))
    model.complete([Message(role="user", content="hi")], [], channel="agent", turn=0)
    model.close()
    body = server.seen[0].json()
    assert "tools" not in body and "tool_choice" not in body and "seed" not in body


def test_scripted_never_receives_the_users_key(fake_server, json_reply, fast, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-user-key")
    server = fake_server(lambda seen, n: json_reply(ANSWER))
    _ask(open_model("scripted/null", settings=fast, base_url=server.url + "/v1"))
    assert "sk-real-user-key" not in server.seen[0].headers["authorization"]


def test_transcript_maps_to_the_wire_format():
    call = ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')
    assert [to_wire(m) for m in [
        Message(role="system", content="sys"),
        Message(role="user", content="do it"),
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(role="tool", content="a.py", tool_call_id="c1"),
        Message(role="assistant", content="done"),
    ]] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "do it"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        {"role": "assistant", "content": "done"},
    ]


@pytest.mark.parametrize(
    ("status", "hint"),
    [(500, "provider failed on its side"), (429, "rate limited"), (401, "OPENAI_API_KEY"), (404, "model name")],
)
def test_http_failures_become_model_errors(fake_server, json_reply, fast, status, hint):
    server = fake_server(lambda seen, n: json_reply({"error": {"message": "nope"}}, status))
    with pytest.raises(ModelError) as info:
        _ask(_compat(server.url, fast))
    error = info.value
    assert (error.status, error.provider, error.retries) == (status, "openai-compatible", 0)
    assert error.base_url.startswith(server.url + "/v1")
    message = str(error)
    assert f"HTTP {status}" in message and server.url in message and "openai-compatible/m" in message
    assert hint in message and "(nope)" in message  # the provider's own words
    assert error.__cause__ is None and error.__suppress_context__


def test_non_json_body_is_a_model_error(fake_server, fast):
    server = fake_server(lambda seen, n: (200, {"Content-Type": "text/html"}, b"<html>login</html>"))
    with pytest.raises(ModelError, match="not JSON") as info:
        _ask(_compat(server.url, fast))
    assert info.value.status == 200 and "base URL" in str(info.value)


def test_json_that_is_no_completion_is_a_model_error(fake_server, json_reply, fast):
    server = fake_server(lambda seen, n: json_reply({"choices": [{"message": "oops"}]}))
    with pytest.raises(ModelError, match="not a chat completion"):
        _ask(_compat(server.url, fast))


def test_no_choices_is_a_model_error(fake_server, json_reply, fast):
    server = fake_server(lambda seen, n: json_reply({"id": "x", "choices": []}))
    with pytest.raises(ModelError, match="no choices"):
        _ask(_compat(server.url, fast))


def test_connection_refused_is_a_model_error(closed_port, fast):
    with pytest.raises(ModelError) as info:
        _ask(_compat(f"http://127.0.0.1:{closed_port}", fast))
    error = info.value
    assert error.status is None
    message = str(error)
    assert "could not connect" in message and f"127.0.0.1:{closed_port}" in message
    assert "server is running" in message


def test_timeout_is_a_model_error(fake_server, json_reply):
    def slow(seen, n):
        time.sleep(1.0)
        return json_reply(ANSWER)

    server = fake_server(slow)
    with pytest.raises(ModelError, match="timeout_s=0.2"):
        _ask(_compat(server.url, RunSettings(timeout_s=0.2)))


def test_retries_are_counted_when_they_give_up(fake_server, json_reply):
    server = fake_server(lambda seen, n: json_reply({"error": {"message": "boom"}}, 500, **QUICK))
    with pytest.raises(ModelError) as info:
        _ask(_compat(server.url, RunSettings(max_retries=2, timeout_s=5)))
    assert len(server.seen) == 3  # the SDK really retried
    assert info.value.retries == 2
    assert "after 2 retries" in str(info.value)
    # Every attempt carried the completion's tags.
    assert {s.headers["x-endstate-turn"] for s in server.seen} == {"3"}


def test_retries_are_counted_when_they_succeed(fake_server, json_reply):
    def flaky(seen, n):
        return json_reply({"error": {"message": "busy"}}, 429, **QUICK) if n == 0 else json_reply(ANSWER)

    server = fake_server(flaky)
    model = _compat(server.url, RunSettings(max_retries=2, timeout_s=5))
    try:
        first = model.complete([Message(role="user", content="hi")], [READ], channel="agent", turn=0)
        second = model.complete([Message(role="user", content="hi")], [READ], channel="agent", turn=1)
    finally:
        model.close()
    assert len(server.seen) == 3
    assert (first.retries, second.retries) == (1, 0)


def test_the_key_never_appears_in_an_error(fake_server, json_reply, fast):
    server = fake_server(lambda seen, n: json_reply({"error": {"message": f"Incorrect API key provided: {KEY}"}}, 401))
    with pytest.raises(ModelError) as info:
        _ask(_compat(server.url, fast))
    assert KEY not in str(info.value) and "***" in str(info.value)
