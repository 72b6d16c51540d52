"""The proxy counts a foreign agent's tokens from whole and streamed answers of each wire format."""

from __future__ import annotations

import json

from endstate.agents._proxy import Tokens, answer_tokens, answer_usage


def _sse(*events: dict, done: bool = False) -> bytes:
    lines = []
    for event in events:
        kind = event.get("type")
        lines += ([f"event: {kind}"] if kind else []) + [f"data: {json.dumps(event)}", ""]
    return "\n".join(lines + (["data: [DONE]", ""] if done else [])).encode()


def test_a_whole_chat_completion_and_a_whole_message():
    assert answer_usage(json.dumps({"usage": {"prompt_tokens": 12, "completion_tokens": 5}}).encode()) == (12, 5)
    assert answer_usage(json.dumps({"type": "message", "usage": {"input_tokens": 9, "output_tokens": 4}}).encode()) == (9, 4)


def test_a_streamed_chat_completion_counts_its_usage_chunk():
    answer = _sse({"choices": [{"delta": {"content": "hi"}}]}, {"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 7}},
                  done=True)
    assert answer_usage(answer) == (30, 7)


def test_a_messages_stream_takes_the_input_from_message_start_and_the_last_output_count():
    answer = _sse(
        {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 41, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 15}},
        {"type": "message_stop"},
    )
    assert answer_usage(answer) == (41, 15)


def test_a_responses_stream_counts_only_the_completed_response():
    answer = _sse(
        {"type": "response.created", "response": {"id": "r", "usage": None}},
        {"type": "response.output_text.delta", "delta": "ok"},
        {"type": "response.completed", "response": {"id": "r", "usage": {"input_tokens": 50, "output_tokens": 8}}},
    )
    assert answer_usage(answer) == (50, 8)


# -- tokens by kind: what Claude Code's and Codex's answers say of the prompt cache and reasoning

def test_claude_code_s_cache_reads_and_writes_count_as_input_and_by_kind():
    # As the Messages API streams it (and the committed Claude Code recordings hold it): input_tokens
    # is only what is neither read from the cache nor written to it.
    answer = _sse(
        {"type": "message_start", "message": {"id": "m", "usage": {
            "input_tokens": 3, "cache_read_input_tokens": 17490, "cache_creation_input_tokens": 1541,
            "output_tokens": 1}}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 88}},
    )
    assert answer_tokens(answer) == Tokens(input=3 + 17490 + 1541, output=88, cached=17490, cache_write=1541)
    assert answer_usage(answer) == (19034, 88)


def test_codex_s_cached_and_reasoning_tokens_are_counted_from_the_completed_response():
    usage = {"input_tokens": 10619, "input_tokens_details": {"cached_tokens": 9728}, "output_tokens": 112,
             "output_tokens_details": {"reasoning_tokens": 17}, "total_tokens": 10731}
    answer = _sse({"type": "response.created", "response": {"id": "r", "usage": None}},
                  {"type": "response.completed", "response": {"id": "r", "usage": usage}})
    assert answer_tokens(answer) == Tokens(input=10619, output=112, cached=9728, reasoning=17)


def test_a_chat_completion_s_details_and_odd_values():
    usage = {"prompt_tokens": 30, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 16},
             "completion_tokens_details": {"reasoning_tokens": 4}}
    assert answer_tokens(json.dumps({"usage": usage}).encode()) == Tokens(30, 7, 16, 0, 4)
    odd = {"prompt_tokens": "30", "completion_tokens": None, "prompt_tokens_details": [1]}
    assert answer_tokens(json.dumps({"usage": odd}).encode()) == Tokens()  # a wrong shape counts nothing
