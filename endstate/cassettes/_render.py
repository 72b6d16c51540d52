"""Requests and responses as text a person can read: messages, tool calls, tool results.

Understands the chat-completions and Anthropic messages shapes; any other body is
shown as (pretty) JSON or text. `limit` cuts each message's content to a head and
a tail so that one huge tool result does not bury the rest.
"""

from __future__ import annotations

import json
from typing import Any

from endstate.cassettes._match import canonical_body

__all__ = ["request_messages", "request_lines", "response_lines", "message_lines", "clip"]


def clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3):]
    return f"{head}\n… [{len(text) - len(head) - len(tail)} characters cut] …\n{tail}"


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _content_text(content: Any, limit: int | None) -> list[str]:
    """Lines for a message's content: a string, or a list of typed blocks."""
    if content is None:
        return []
    if isinstance(content, str):
        return clip(content, limit).splitlines() or [""]
    if not isinstance(content, list):
        return [clip(json.dumps(content, ensure_ascii=False, sort_keys=True), limit)]
    lines: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            lines += _content_text(block, limit)
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text"):
            lines += _content_text(block.get("text", ""), limit)
        elif kind == "reasoning":  # a Responses reasoning item: its summary, its content sealed
            sealed = "encrypted" if block.get("encrypted_content") else "plain"
            summary = "\n".join(str(part.get("text", "")) for part in block.get("summary") or () if isinstance(part, dict))
            lines += ([f"(reasoning, {sealed}) {line}" for line in _content_text(summary, limit)] if summary
                      else [f"(reasoning, {sealed}, no summary)"])
        elif kind == "function_call":
            lines.append(f"-> {block.get('name')}({clip(_arguments(block.get('arguments')), limit)})  "
                         f"[{block.get('call_id')}]")
        elif kind == "function_call_output":
            lines.append(f"<- result for {block.get('call_id')}:")
            lines += [f"  {line}" for line in _content_text(block.get("output"), limit)]
        elif kind == "tool_use":
            lines.append(f"-> {block.get('name')}({clip(_arguments(block.get('input')), limit)})  [{block.get('id')}]")
        elif kind == "thinking":
            signed = "signed" if block.get("signature") else "unsigned"
            lines += [f"(thinking, {signed}) {line}" for line in _content_text(block.get("thinking", ""), limit)]
        elif kind == "redacted_thinking":
            lines.append(f"(redacted thinking: {len(str(block.get('data', '')))} characters, encrypted)")
        elif kind == "tool_result":
            lines.append(f"<- result for {block.get('tool_use_id')}:")
            lines += [f"  {line}" for line in _content_text(block.get("content"), limit)]
        else:
            lines.append(clip(json.dumps(block, ensure_ascii=False, sort_keys=True), limit))
    return lines


def message_lines(message: dict[str, Any], limit: int | None) -> list[str]:
    """One message: a role line, its content indented, its tool calls as arrows."""
    role = str(message.get("role", "?"))
    if message.get("tool_call_id"):
        role = f"{role} {message['tool_call_id']}"
    lines = [f"[{role}]"]
    lines += [f"  {line}" for line in _content_text(message.get("content"), limit)]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, dict) else {}
        arguments = clip(_arguments(function.get("arguments", "")), limit)
        lines.append(f"  -> {function.get('name')}({arguments})  [{call.get('id')}]")
    return lines


def request_messages(body: bytes) -> list[dict[str, Any]] | None:
    """The conversation a request sends (system prompt first), or None if it is not a chat request."""
    document = canonical_body(body)
    if isinstance(document, dict) and isinstance(document.get("input"), list):  # the Responses API
        return _response_items(document["input"], document.get("instructions"))
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        return None
    messages = [m if isinstance(m, dict) else {"role": "?", "content": m} for m in document["messages"]]
    if "system" in document:  # Anthropic keeps the system prompt beside the messages
        messages.insert(0, {"role": "system", "content": document["system"]})
    return messages


#: Who speaks a Responses item that carries no role of its own.
_ITEM_ROLES = {"reasoning": "assistant", "function_call": "assistant", "function_call_output": "tool"}


def _response_items(items: list[Any], instructions: Any = None) -> list[dict[str, Any]]:
    """A Responses input or output list as messages: items with a role as they are, the others
    (reasoning, function calls and their outputs) as a one-block message of their speaker."""
    messages = [{"role": "system", "content": instructions}] if instructions else []
    for item in items:
        if isinstance(item, dict) and "role" in item:
            messages.append(item)
        elif isinstance(item, dict):
            messages.append({"role": _ITEM_ROLES.get(str(item.get("type")), "?"), "content": [item]})
        else:
            messages.append({"role": "?", "content": item})
    return messages


def request_lines(body: bytes, *, limit: int | None, skip: int = 0, skipped_from: str = "") -> list[str]:
    """A request: its settings on one line, then its messages from `skip` on.

    `skipped_from` names where the skipped messages were shown (e.g. "#3").
    """
    document = canonical_body(body)
    messages = request_messages(body)
    if messages is None:
        return _raw_lines(document, limit)
    settings = {k: v for k, v in document.items() if k not in ("messages", "system", "tools", "input", "instructions")}
    tools = [_tool_name(t) for t in document.get("tools") or ()]
    lines = [f"settings: {json.dumps(settings, ensure_ascii=False, sort_keys=True)}"]
    if tools:
        lines.append(f"tools: {', '.join(tools)}")
    if skip:
        lines.append(f"… {skip} earlier message(s), as sent in {skipped_from or 'the previous request'}")
    for message in messages[skip:]:
        lines += message_lines(message, limit)
    return lines


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        return str(tool.get("function", {}).get("name") or tool.get("name") or "?")
    return "?"


def response_lines(status: int, body: bytes, *, limit: int | None, usage: bool = False) -> list[str]:
    """A response: the status, the answer's message and why it stopped, or the raw body; with
    `usage`, its token counts (which `diff` leaves out, as it leaves out ids: the agent acts
    on the message, and cached counts vary with the provider's cache)."""
    document = canonical_body(body)
    if not usage:
        document = {k: v for k, v in document.items() if k != "usage"} if isinstance(document, dict) else document
    head = f"status: {status}"
    if isinstance(document, dict) and isinstance(document.get("choices"), list) and document["choices"]:
        choice = document["choices"][0]
        lines = [f"{head}, finish_reason: {choice.get('finish_reason')}"]
        return lines + message_lines(choice.get("message") or {}, limit) + _usage_lines(document.get("usage"))
    if isinstance(document, dict) and document.get("type") == "message":  # Anthropic
        lines = [f"{head}, stop_reason: {document.get('stop_reason')}"]
        return (lines + message_lines({"role": document.get("role"), "content": document.get("content")}, limit)
                + _usage_lines(document.get("usage")))
    if isinstance(document, dict) and document.get("object") == "response" and isinstance(document.get("output"), list):
        lines = [f"{head}, status: {document.get('status')}"]
        for message in _response_items(document["output"]):
            lines += message_lines(message, limit)
        return lines + _usage_lines(document.get("usage"))
    return [head, *_raw_lines(document, limit)]


# What each provider calls the token counts worth a line, by the name shown.
_USAGE_FIELDS = (("input", ("prompt_tokens", "input_tokens")),
                 ("cached", ("prompt_tokens_details.cached_tokens", "cache_read_input_tokens",
                             "input_tokens_details.cached_tokens")),
                 ("cache write", ("cache_creation_input_tokens",)),
                 ("output", ("completion_tokens", "output_tokens")),
                 ("reasoning", ("completion_tokens_details.reasoning_tokens", "output_tokens_details.reasoning_tokens")))


def _usage_lines(usage: Any) -> list[str]:
    """The answer's token usage on one line, when it reports any."""
    if not isinstance(usage, dict):
        return []
    parts = []
    for name, paths in _USAGE_FIELDS:
        for path in paths:
            value: Any = usage
            for key in path.split("."):
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, int) and (value or name in ("input", "output")):
                parts.append(f"{name} {value}")
                break
    return [f"usage: {', '.join(parts)}"] if parts else []


def _raw_lines(document: Any, limit: int | None) -> list[str]:
    if isinstance(document, str):
        return clip(document, limit).splitlines()
    return clip(json.dumps(document, ensure_ascii=False, sort_keys=True, indent=1), limit).splitlines()
