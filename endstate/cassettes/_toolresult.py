"""What a recording says a tool call returned: read from the request that carried it to the model.

A tool call's result reaches the model in the next agent turn's request, so a replay can
know, before it runs a call, what the recorded run saw. The agent uses that for the one
thing a machine's speed decides: whether a command beat the timeout the model gave it.

    tool_result(recording, turn=3, call_id="call_1")   the text, or None if not recorded

`turn` is the agent turn whose request carries the result: the loop's turn counter while
the call runs (the request that asked for the call was turn - 1).
"""

from __future__ import annotations

from typing import Any

import msgspec

from endstate.cassettes._format import Recording

__all__ = ["tool_result"]


def tool_result(recording: Recording, *, turn: int, call_id: str) -> str | None:
    """The result of tool call `call_id` as agent turn `turn`'s recorded request carried it to the
    model (OpenAI's tool messages or Anthropic's tool_result blocks); None when that request is
    not in the recording or does not carry it."""
    following = next((i.request for i in recording.interactions
                      if i.request.channel == "agent" and i.request.turn == turn), None)
    if following is None:
        return None
    try:
        body = msgspec.json.decode(following.body)
    except msgspec.DecodeError:
        return None
    found = None
    for message in body.get("messages", []) if isinstance(body, dict) else []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            found = _text(message.get("content"))
        elif isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                    found = _text(block.get("content"))
    return found  # the last one: a model that reuses call ids across turns answers with its newest


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    return None
