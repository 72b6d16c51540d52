"""`cassette show` prints thinking turns and each answer's token usage."""

from __future__ import annotations

import json

from endstate.cassettes._render import response_lines


def test_thinking_redacted_thinking_and_usage_are_printed():
    answer = {"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [
        {"type": "thinking", "thinking": "I should run the tests.", "signature": "c2ln"},
        {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest"}}],
        "usage": {"input_tokens": 3, "output_tokens": 40, "cache_read_input_tokens": 900,
                  "cache_creation_input_tokens": 50}}
    lines = response_lines(200, json.dumps(answer).encode(), limit=None, usage=True)
    assert lines == ["status: 200, stop_reason: tool_use", "[assistant]",
                     "  (thinking, signed) I should run the tests.",
                     "  (redacted thinking: 12 characters, encrypted)",
                     '  -> bash({"command": "pytest"})  [t1]',
                     "usage: input 3, cached 900, cache write 50, output 40"]


def test_chat_usage_shows_cached_and_reasoning_tokens():
    answer = {"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "done"}}],
              "usage": {"prompt_tokens": 2048, "completion_tokens": 300,
                        "prompt_tokens_details": {"cached_tokens": 1920},
                        "completion_tokens_details": {"reasoning_tokens": 256}}}
    lines = response_lines(200, json.dumps(answer).encode(), limit=None, usage=True)
    assert response_lines(200, json.dumps(answer).encode(), limit=None)[-1] == "  done"  # diff judges the message
    assert lines[-1] == "usage: input 2048, cached 1920, output 300, reasoning 256"


def test_a_responses_answer_shows_its_reasoning_item_function_call_and_usage():
    answer = {"object": "response", "status": "completed", "output": [
        {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA",
         "summary": [{"type": "summary_text", "text": "Run the tests first."}]},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": '{"command": "pytest"}'}],
        "usage": {"input_tokens": 500, "output_tokens": 90, "input_tokens_details": {"cached_tokens": 384},
                  "output_tokens_details": {"reasoning_tokens": 64}}}
    lines = response_lines(200, json.dumps(answer).encode(), limit=None, usage=True)
    assert lines == ["status: 200, status: completed", "[assistant]", "  (reasoning, encrypted) Run the tests first.",
                     "[assistant]", '  -> bash({"command": "pytest"})  [c1]',
                     "usage: input 500, cached 384, output 90, reasoning 64"]


def test_a_responses_request_shows_instructions_input_and_tool_outputs():
    from endstate.cassettes._render import request_lines

    request = {"model": "m", "instructions": "You fix bugs.", "store": False, "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "Fix it."}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "1 passed"}]}
    lines = request_lines(json.dumps(request).encode(), limit=None)
    assert lines[0] == 'settings: {"model": "m", "store": false}'
    assert lines[1:] == ["[system]", "  You fix bugs.", "[user]", "  Fix it.", "[assistant]", "  (reasoning, encrypted, no summary)",
                         "[assistant]", "  -> bash({})  [c1]", "[tool]", "  <- result for c1:", "    1 passed"]
