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
