"""The Anthropic adapter against a local fake speaking the Messages API wire format."""

from __future__ import annotations

import pytest

from endstate.models import Message, ModelError, RunSettings, ToolCall, ToolSchema, open_model
from endstate.models._anthropic import to_wire

KEY = "sk-ant-test-5678"
READ = ToolSchema(name="read_file", description="read a file", parameters={"type": "object", "properties": {}})

ANSWER = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 20, "output_tokens": 9},
}

CALL = ToolCall(id="toolu_0", name="bash", arguments='{"command": "ls"}')
TRANSCRIPT = [
    Message(role="system", content="You are careful."),
    Message(role="user", content="Fix it."),
    Message(role="assistant", content="Listing.", tool_calls=(CALL, ToolCall(id="toolu_9", name="bash", arguments="{"))),
    Message(role="tool", content="a.py", tool_call_id="toolu_0"),
    Message(role="tool", content="error", tool_call_id="toolu_9"),
]


def _claude(url: str, settings: RunSettings):
    return open_model("anthropic/claude-test", settings=settings, base_url=url, api_key=KEY)


def test_answer_maps_to_a_completion_and_request_to_the_wire(fake_server, json_reply):
    server = fake_server(lambda seen, n: json_reply(ANSWER))
    model = _claude(server.url, RunSettings(temperature=0.5, max_output_tokens=321, timeout_s=5))
    try:
        completion = model.complete(TRANSCRIPT, [READ], channel="agent", turn=4, tool_choice="required")
    finally:
        model.close()
    assert completion.message == Message(
        role="assistant",
        content="Looking.",
        tool_calls=(ToolCall(id="toolu_1", name="read_file", arguments='{"path": "a.py"}'),),
    )
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (20, 9)
    assert (completion.finish_reason, completion.retries) == ("tool_use", 0)

    (seen,) = server.seen
    assert seen.path == "/v1/messages"
    # SDK 2.x sends the key as a bearer token; older ones used x-api-key.
    assert KEY in seen.headers.get("authorization", "") + seen.headers.get("x-api-key", "")
    assert (seen.headers["x-endstate-channel"], seen.headers["x-endstate-turn"]) == ("agent", "4")
    body = seen.json()
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 321
    assert "temperature" not in body  # the API refuses sampling settings
    assert body["system"] == "You are careful."
    assert body["tools"] == [
        {"name": "read_file", "description": "read a file", "input_schema": {"type": "object", "properties": {}}}
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["messages"] == to_wire(TRANSCRIPT)[1]


def test_transcript_maps_to_blocks():
    system, turns = to_wire(TRANSCRIPT)
    assert system == "You are careful."
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "Fix it."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_0", "name": "bash", "input": {"command": "ls"}},
                # Malformed arguments from the model are kept, not dropped.
                {"type": "tool_use", "id": "toolu_9", "name": "bash", "input": {"_unparsed_arguments": "{"}},
            ],
        },
        # Consecutive tool results share one user turn.
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_0", "content": "a.py"},
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": "error"},
            ],
        },
    ]


def test_auto_tool_choice_and_plain_text_answer(fake_server, json_reply):
    answer = {**ANSWER, "content": [{"type": "text", "text": "All done."}], "stop_reason": "end_turn"}
    server = fake_server(lambda seen, n: json_reply(answer))
    model = _claude(server.url, RunSettings(timeout_s=5))
    try:
        completion = model.complete([Message(role="user", content="hi")], [READ], channel="agent", turn=0)
    finally:
        model.close()
    assert completion.message == Message(role="assistant", content="All done.")
    assert server.seen[0].json()["tool_choice"] == {"type": "auto"}
    assert "system" not in server.seen[0].json()


def test_failures_become_model_errors_with_retries_counted(fake_server, json_reply):
    server = fake_server(
        lambda seen, n: json_reply({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}, 529,
                                   **{"retry-after-ms": "1"})
    )
    model = _claude(server.url, RunSettings(max_retries=1, timeout_s=5))
    with pytest.raises(ModelError) as info:
        try:
            model.complete([Message(role="user", content="hi")], [], channel="agent", turn=0)
        finally:
            model.close()
    assert len(server.seen) == 2
    error = info.value
    assert (error.status, error.retries, error.provider) == (529, 1, "anthropic")
    assert "HTTP 529" in str(error) and server.url in str(error) and "after 1 retry" in str(error)


def test_bad_key_names_the_variable(fake_server, json_reply):
    server = fake_server(
        lambda seen, n: json_reply({"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}, 401)
    )
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        model = _claude(server.url, RunSettings(timeout_s=5))
        try:
            model.complete([Message(role="user", content="hi")], [], channel="agent", turn=0)
        finally:
            model.close()


def test_non_json_and_connection_refused(fake_server, closed_port):
    server = fake_server(lambda seen, n: (200, {"Content-Type": "text/plain"}, b"hello"))
    for url, expected in [(server.url, "not JSON"), (f"http://127.0.0.1:{closed_port}", "could not connect")]:
        model = _claude(url, RunSettings(timeout_s=5))
        with pytest.raises(ModelError, match=expected):
            try:
                model.complete([Message(role="user", content="hi")], [], channel="agent", turn=0)
            finally:
                model.close()
