"""A finished answer as the server-sent events the real API streams for `"stream": true`.

    stream_events("chat", completion, include_usage=True)   chat.completion.chunk data lines, then [DONE]
    stream_events("messages", message)                      message_start ... message_stop (Anthropic)
    stream_events("responses", response)                    response.created ... response.completed

Each wire streams the same answer its non-streamed endpoint returns, in the event
sequence the provider documents, so the official SDKs' stream helpers rebuild it
exactly. Texts and argument JSON are cut into pieces of a fixed length, so the
helpers' accumulation is exercised and the bytes depend on the answer alone.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from endstate.models.scripted._policies import canonical_json

__all__ = ["stream_events", "PIECE"]

#: Characters per streamed delta.
PIECE = 24


def _pieces(text: str) -> list[str]:
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)] or [""]


def _event(data: Any, name: str | None = None) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {canonical_json(data)}\n\n".encode()


def stream_events(wire: str, answer: dict[str, Any], *, include_usage: bool = False) -> bytes:
    """The whole event stream for `answer` (the non-streamed body of `wire`)."""
    if wire == "messages":
        return b"".join(_event(e, e["type"]) for e in _messages(answer))
    if wire == "responses":
        return b"".join(_event(e, e["type"]) for e in _responses(answer))
    return b"".join(_event(e) for e in _chat(answer, include_usage)) + b"data: [DONE]\n\n"


def _chat(answer: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
    choice, message = answer["choices"][0], answer["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        body = {"id": answer["id"], "object": "chat.completion.chunk", "created": answer["created"],
                "model": answer["model"], "system_fingerprint": None,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        return {**body, "usage": None} if include_usage else body

    yield chunk({"role": "assistant", "content": "", "refusal": None})
    if message.get("content"):
        for piece in _pieces(message["content"]):
            yield chunk({"content": piece})
    for index, call in enumerate(message.get("tool_calls") or ()):
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for piece in _pieces(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield {**chunk({}), "choices": [], "usage": answer["usage"]}


def _messages(answer: dict[str, Any]) -> Iterator[dict[str, Any]]:
    usage = answer["usage"]
    start = {**answer, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": 1}}
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(answer["content"]):
        kind = block["type"]
        if kind == "redacted_thinking":
            yield {"type": "content_block_start", "index": index, "content_block": block}
        elif kind == "thinking":
            yield {"type": "content_block_start", "index": index,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            for piece in _pieces(block["thinking"]):
                yield {"type": "content_block_delta", "index": index,
                       "delta": {"type": "thinking_delta", "thinking": piece}}
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": block["signature"]}}
        elif kind == "text":
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            for piece in _pieces(block["text"]):
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
        elif kind == "tool_use":
            yield {"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            for piece in _pieces(json.dumps(block["input"], separators=(",", ":"))):
                yield {"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield {"type": "content_block_stop", "index": index}
    yield {"type": "message_delta", "delta": {"stop_reason": answer["stop_reason"], "stop_sequence": None},
           "usage": {"output_tokens": usage["output_tokens"]}}
    yield {"type": "message_stop"}


def _responses(answer: dict[str, Any]) -> Iterator[dict[str, Any]]:
    sequence = iter(range(1 << 30))

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "sequence_number": next(sequence), **fields}

    pending = {**answer, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    for index, item in enumerate(answer["output"]):
        added = copy.deepcopy(item)
        if item["type"] == "message":
            added.update(status="in_progress", content=[])
        elif item["type"] == "function_call":
            added.update(status="in_progress", arguments="")
        elif item["type"] == "reasoning":
            added.update(summary=[])
        yield event("response.output_item.added", output_index=index, item=added)
        if item["type"] == "message":
            for part_index, part in enumerate(item["content"]):
                where = {"item_id": item["id"], "output_index": index, "content_index": part_index}
                yield event("response.content_part.added", **where, part={**part, "text": ""})
                for piece in _pieces(part["text"]):
                    yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
                yield event("response.output_text.done", **where, text=part["text"], logprobs=[])
                yield event("response.content_part.done", **where, part=part)
        elif item["type"] == "function_call":
            for piece in _pieces(item["arguments"]):
                yield event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                            delta=piece)
            yield event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                        name=item["name"], arguments=item["arguments"])
        elif item["type"] == "reasoning":
            for part_index, part in enumerate(item["summary"]):
                where = {"item_id": item["id"], "output_index": index, "summary_index": part_index}
                yield event("response.reasoning_summary_part.added", **where,
                            part={"type": "summary_text", "text": ""})
                for piece in _pieces(part["text"]):
                    yield event("response.reasoning_summary_text.delta", **where, delta=piece)
                yield event("response.reasoning_summary_text.done", **where, text=part["text"])
                yield event("response.reasoning_summary_part.done", **where, part=part)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=answer)
