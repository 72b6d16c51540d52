"""The scripted server's Anthropic Messages API: answers, signed thinking, cached usage.

    POST /scripted/<policy>/<task_id>/v1/messages

A policy's chat-completions message is re-dressed as a Messages API answer (text and
tool_use blocks). A request that asks for thinking (`{"type": "enabled", "budget_tokens": N}`, or
`{"type": "adaptive"}` as Claude Code sends it) gets thinking blocks first, signed
as the real API signs them (opaque, checked when they come back), and every third
agent turn a redacted_thinking block too. A request whose thinking blocks were
altered, or whose tool-use continuation dropped them, is refused with HTTP 400 as
the real API refuses it. A request with cache breakpoints is answered with the
usage a prompt cache would report: everything before the newest turn read from the
cache, the newest turn written to it. Nothing depends on state kept between
requests, so concurrent tasks cannot change one another's answers.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

from endstate.models.scripted._policies import ScriptError, canonical_json, estimate_tokens

__all__ = ["messages_answer", "check_thinking", "sign", "seal", "is_sealed", "error_body"]

# Not a secret: it only lets the server tell its own blocks from edited ones.
_KEY = b"endstate-scripted-thinking"


def sign(text: str) -> str:
    """The signature the server puts on a thinking block of `text`."""
    return base64.b64encode(hmac.new(_KEY, text.encode(), hashlib.sha256).digest()).decode()


def seal(payload: str) -> str:
    """An opaque, signed text carrying `payload` (redacted thinking, encrypted reasoning)."""
    return base64.b64encode(payload.encode() + b"." + hmac.new(_KEY, payload.encode(), hashlib.sha256).digest()).decode()


def is_sealed(data: str) -> bool:
    """Whether `data` is a text `seal` made, unaltered."""
    try:
        raw = base64.b64decode(data.encode(), validate=True)
    except ValueError:
        return False
    payload, _, mac = raw.partition(b".")
    return hmac.compare_digest(mac, hmac.new(_KEY, payload, hashlib.sha256).digest())


def check_thinking(request: dict[str, Any], *, adaptive: bool = False) -> None:
    """Refuse (ScriptError 400) what the Messages API refuses with thinking on: a thinking
    block whose signature does not match, and a tool-use continuation whose assistant
    turn does not start with its thinking. With adaptive thinking a turn may have had
    none (the model decides), so only the signatures of the blocks sent back are checked."""
    turns = request.get("messages", [])
    for index, turn in enumerate(turns):
        content = turn.get("content")
        if turn.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            kind = block.get("type")
            if kind == "thinking" and not hmac.compare_digest(str(block.get("signature", "")),
                                                              sign(str(block.get("thinking", "")))):
                raise ScriptError(400, f"messages.{index}.content: Invalid `signature` in `thinking` block")
            if kind == "redacted_thinking" and not is_sealed(str(block.get("data", ""))):
                raise ScriptError(400, f"messages.{index}.content: Invalid `data` in `redacted_thinking` block")
    last = max((i for i, t in enumerate(turns) if t.get("role") == "assistant"), default=None)
    if adaptive or last is None or last != len(turns) - 2:
        return
    content = turns[last].get("content")
    blocks = content if isinstance(content, list) else [{"type": "text"}]
    uses_tools = any(b.get("type") == "tool_use" for b in blocks)
    if uses_tools and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
        raise ScriptError(400, f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
                               f"found `{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` "
                               "message must start with a thinking block")


def _thinking_blocks(task_id: str, channel: str, turn: int | None, message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = [c["function"]["name"] for c in message.get("tool_calls") or ()]
    text = (f"Turn {'-' if turn is None else turn} of {task_id} ({channel}): "
            + (f"next I call {', '.join(calls)}." if calls else "I can answer now."))
    blocks = [{"type": "thinking", "thinking": text, "signature": sign(text)}]
    if turn is not None and turn % 3 == 2:
        blocks.append({"type": "redacted_thinking", "data": seal(f"{task_id}/{channel}/{turn}")})
    return blocks


def _usage(request: dict[str, Any], output_tokens: int) -> dict[str, int]:
    system, tools, turns = request.get("system", ""), request.get("tools", []), request.get("messages", [])
    whole = estimate_tokens([system, tools, turns])
    if "cache_control" not in canonical_json([system, tools, turns]):
        return {"input_tokens": whole, "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    # The breakpoint on the previous turn put everything before the newest one in the cache.
    read = estimate_tokens([system, tools, turns[:-1]]) if len(turns) > 1 else 0
    written = whole - read
    return {"input_tokens": 0, "output_tokens": output_tokens,
            "cache_creation_input_tokens": written, "cache_read_input_tokens": read}


def _thinking_mode(thinking: Any, max_tokens: Any) -> str | None:
    """"enabled" or "adaptive" when the request asks for thinking, None when it does not (no
    field, or `{"type": "disabled"}`); ScriptError 400 for what the API refuses. Adaptive
    thinking (the model decides how much to think) takes no budget; the scripted model
    always thinks, so its answers carry thinking blocks as with a budget."""
    if thinking is None:
        return None
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "disabled":
        return None
    if kind == "adaptive":
        if "budget_tokens" in thinking:
            raise ScriptError(400, "thinking.adaptive.budget_tokens: Extra inputs are not permitted")
        return kind
    if kind == "enabled" and isinstance(thinking.get("budget_tokens"), int) \
            and isinstance(max_tokens, int) and 1024 <= thinking["budget_tokens"] < max_tokens:
        return kind
    if kind not in ("enabled", "adaptive", "disabled"):
        raise ScriptError(400, "thinking.type: Input tag does not match any of the expected tags: "
                               "'enabled', 'disabled', 'adaptive'")
    raise ScriptError(400, "thinking: budget_tokens must be at least 1024 and less than max_tokens")


def messages_answer(request: dict[str, Any], message: dict[str, Any], *, policy: str, task_id: str,
                    channel: str, turn: int | None) -> dict[str, Any]:
    """The Messages API answer carrying the policy's chat-completions `message`."""
    thinking = _thinking_mode(request.get("thinking"), request.get("max_tokens", 0))
    if thinking is not None:
        check_thinking(request, adaptive=thinking == "adaptive")
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content += _thinking_blocks(task_id, channel, turn, message)
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or ():
        content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                        "input": json.loads(call["function"]["arguments"] or "{}")})
    return {
        "id": f"msg_scripted-{policy}-{task_id}-{channel}-{'none' if turn is None else turn}",
        "type": "message",
        "role": "assistant",
        "model": f"scripted/{policy}",
        "content": content,
        "stop_reason": "tool_use" if message.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": _usage(request, estimate_tokens(content)),
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}
