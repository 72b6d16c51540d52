"""A fork across wire formats: the parent's answers said again in the new provider's format.

    translate_answer(body, "Chat Completions", "the Messages API", model) -> bytes
    said(body, path) -> [prompt and tool outputs, in order]

A fork of a Chat Completions recording onto a Messages API model cannot match the new
model's requests against the parent's bytes: the adapter renders the same conversation
in another shape. So the prefix is served by agent turn instead, each parent answer read
into what the loop keeps of it (text, tool calls, token usage) and written in the new
format; the new adapter renders the conversation so far from its own transcript. A turn
still matches only if what the sandbox and the task said in its request is the parent's
(`said`): the prompt and every tool output, in order. What the new format has no place
for (an Anthropic thinking block's signature, a Responses reasoning item) is dropped, and
the fork's notes say so.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

__all__ = ["Answer", "read_answer", "translate_answer", "said", "WIRE_OF_PATH"]

#: The wire format a request's path posts to (its endpoint), as endstate.models.WIRE_FORMATS names it.
WIRE_OF_PATH = (("/chat/completions", "Chat Completions"), ("/messages", "the Messages API"),
                ("/responses", "the Responses API"))


class Answer(NamedTuple):
    """What the agent loop keeps of one answer, whatever its format."""

    text: str
    #: (call id, tool name, arguments as JSON text)
    calls: list[tuple[str, str, str]]
    input_tokens: int
    output_tokens: int
    #: Parts the loop keeps that another format has no place for (thinking, reasoning).
    dropped: int


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_answer(body: bytes, wire: str) -> Answer:
    """One whole answer of `wire` (endstate's loop asks for whole answers, never streams)."""
    document = json.loads(body)
    usage = document.get("usage") or {}
    if wire == "Chat Completions":
        message = (document.get("choices") or [{}])[0].get("message") or {}
        calls = [(c.get("id", ""), c["function"]["name"], c["function"].get("arguments") or "{}")
                 for c in message.get("tool_calls") or []]
        return Answer(message.get("content") or "", calls, _int(usage.get("prompt_tokens")),
                      _int(usage.get("completion_tokens")), 0)
    if wire == "the Messages API":
        blocks = document.get("content") or []
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = [(b["id"], b["name"], json.dumps(b.get("input") or {})) for b in blocks if b.get("type") == "tool_use"]
        cached = _int(usage.get("cache_read_input_tokens")) + _int(usage.get("cache_creation_input_tokens"))
        return Answer(text, calls, _int(usage.get("input_tokens")) + cached, _int(usage.get("output_tokens")),
                      sum(b.get("type") in ("thinking", "redacted_thinking") for b in blocks))
    items = document.get("output") or []
    text = "".join(part.get("text", "") for item in items if item.get("type") == "message"
                   for part in item.get("content") or [] if part.get("type") == "output_text")
    calls = [(i["call_id"], i["name"], i.get("arguments") or "{}") for i in items if i.get("type") == "function_call"]
    return Answer(text, calls, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")),
                  sum(i.get("type") == "reasoning" for i in items))


def translate_answer(body: bytes, source: str, target: str, model: str) -> tuple[bytes, int]:
    """(the answer in `body`, of wire `source`, written as `target` for `model`; parts dropped)."""
    answer = read_answer(body, source)
    text, calls, used_in, used_out = answer.text, answer.calls, answer.input_tokens, answer.output_tokens
    if target == "Chat Completions":
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                     for i, n, a in calls]
        document: dict[str, Any] = {
            "id": "chatcmpl-fork", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": used_in, "completion_tokens": used_out, "total_tokens": used_in + used_out}}
    elif target == "the Messages API":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks += [{"type": "tool_use", "id": i, "name": n, "input": _object(a)} for i, n, a in calls]
        document = {"id": "msg_fork", "type": "message", "role": "assistant", "model": model, "content": blocks,
                    "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": used_in, "output_tokens": used_out}}
    else:
        output: list[dict[str, Any]] = [{"type": "message", "id": "msg_fork", "role": "assistant",
                                         "status": "completed",
                                         "content": [{"type": "output_text", "text": text, "annotations": []}]}
                                        ] if text or not calls else []
        output += [{"type": "function_call", "id": f"fc_{n}", "call_id": i, "name": name, "arguments": a,
                    "status": "completed"} for n, (i, name, a) in enumerate(calls)]
        document = {"id": "resp_fork", "object": "response", "created_at": 0, "model": model, "status": "completed",
                    "output": output, "usage": {"input_tokens": used_in, "output_tokens": used_out,
                                                "total_tokens": used_in + used_out}}
    return json.dumps(document, separators=(",", ":")).encode(), answer.dropped


def _object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {"_unparsed_arguments": arguments}
    return value if isinstance(value, dict) else {"_unparsed_arguments": arguments}


def wire_of_path(path: str) -> str:
    return next((wire for end, wire in WIRE_OF_PATH if path.endswith(end)), "")


def said(body: bytes, path: str) -> list[str]:
    """What the task and the sandbox said in a request, in any format: the user's texts and every
    tool output, in order (the system prompt and the model's own turns are left out)."""
    try:
        document = json.loads(body)
    except ValueError:
        return [body.decode("utf-8", "replace")]
    wire = wire_of_path(path)
    found: list[str] = []
    if wire == "Chat Completions":
        for message in document.get("messages") or []:
            if message.get("role") in ("user", "tool"):
                found.append(_text(message.get("content")))
    elif wire == "the Messages API":
        for turn in document.get("messages") or []:
            if turn.get("role") != "user":
                continue
            content = turn.get("content")
            for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
                if block.get("type") == "text":
                    found.append(block.get("text") or "")
                elif block.get("type") == "tool_result":
                    found.append(_text(block.get("content")))
    else:
        for item in document.get("input") or []:
            if item.get("type") == "function_call_output":
                found.append(_text(item.get("output")))
            elif item.get("role") == "user":
                found.append(_text(item.get("content")))
    return found


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
