"""A fork across wire formats: each parent answer said again in the new format, and the prompt and
tool outputs of a request read alike from any format."""

from __future__ import annotations

import json

import pytest

from endstate.cassettes._crosswire import read_answer, said, translate_answer

CHAT = {"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_0", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 7}}
MESSAGES = {"id": "m", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
            "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": "Let me look."},
                        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}],
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 100, "output_tokens": 9}}
WIRES = ("Chat Completions", "the Messages API", "the Responses API")


@pytest.mark.parametrize("target", WIRES)
@pytest.mark.parametrize(("source", "document"), [("Chat Completions", CHAT), ("the Messages API", MESSAGES)])
def test_an_answer_reads_the_same_in_every_format(source, document, target):
    original = read_answer(json.dumps(document).encode(), source)
    body, dropped = translate_answer(json.dumps(document).encode(), source, target, "reference")
    again = read_answer(body, target)
    assert (again.text, again.calls, again.input_tokens, again.output_tokens) == \
        (original.text, [(i, n, json.dumps(json.loads(a))) if target == "the Messages API" else (i, n, a)
                         for i, n, a in original.calls], original.input_tokens, original.output_tokens)
    assert dropped == (1 if source == "the Messages API" else 0)  # the signed thinking block has no place elsewhere


def test_a_final_answer_without_calls_ends_the_turn_in_each_format():
    final = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Done."}}], "usage": {}}).encode()
    messages = json.loads(translate_answer(final, "Chat Completions", "the Messages API", "r")[0])
    responses = json.loads(translate_answer(final, "Chat Completions", "the Responses API", "r")[0])
    assert (messages["stop_reason"], messages["content"]) == ("end_turn", [{"type": "text", "text": "Done."}])
    assert [item["type"] for item in responses["output"]] == ["message"] and responses["status"] == "completed"


def test_a_request_says_the_same_prompt_and_tool_outputs_in_every_format():
    chat = {"messages": [{"role": "system", "content": "be good"}, {"role": "user", "content": "fix it"},
                         {"role": "assistant", "content": "", "tool_calls": []},
                         {"role": "tool", "tool_call_id": "call_0", "content": "a.py"}]}
    messages = {"system": "be good", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "a.py"}]}]}
    responses = {"instructions": "be good", "input": [
        {"type": "message", "role": "user", "content": "fix it"},
        {"type": "function_call", "call_id": "call_0", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0", "output": "a.py"}]}
    found = [said(json.dumps(body).encode(), path) for body, path in (
        (chat, "/v1/chat/completions"), (messages, "/x/v1/messages"), (responses, "/v1/responses"))]
    assert found == [["fix it", "a.py"]] * 3
    changed = {**responses, "input": [*responses["input"][:2], {**responses["input"][2], "output": "b.py"}]}
    assert said(json.dumps(changed).encode(), "/v1/responses") != found[0]
