"""The scripted server's OpenAI Responses API: output items, encrypted reasoning, usage.

    POST /scripted/<policy>/<task_id>/v1/responses

A policy's chat-completions message is re-dressed as a Response: a `message` item
for its text and a `function_call` item per tool call. A request that asks for
reasoning (`reasoning.effort`) gets a `reasoning` item first, its reasoning text
billed as reasoning tokens (as the Messages endpoint bills thinking); with `include: ["reasoning.encrypted_content"]` it
carries the encrypted form (sealed: opaque, checked when it comes back), and a
summary when `reasoning.summary` asks for one. The server keeps no state, as a
request with `store: false` demands of the real API, so it refuses what the real
API refuses then: `previous_response_id`, a reasoning item passed back without its
encrypted content or with it altered, and a function call passed back without the
reasoning item that came before it. With `auto_cache` the usage reports the whole
input but its newest item as cached, in 128-token steps from 1024, as OpenAI's
automatic cache does.
"""

from __future__ import annotations

from typing import Any

from endstate.models.scripted._messages import is_sealed, seal
from endstate.models.scripted._policies import ScriptError, estimate_tokens

__all__ = ["responses_answer", "check_input", "cached_tokens", "REASONING_TOKENS"]

#: Chat Completions' hidden reasoning, billed as output, per effort: a fixed share.
REASONING_TOKENS = {"minimal": 8, "low": 32, "medium": 64, "high": 128, "xhigh": 256}

_ENCRYPTED = "reasoning.encrypted_content"


def cached_tokens(prefix: Any) -> int:
    """What an automatic prompt cache holds of `prefix`: 128-token steps from 1024."""
    tokens = estimate_tokens(prefix)
    return tokens // 128 * 128 if tokens >= 1024 else 0


def _items(request: dict[str, Any]) -> list[dict[str, Any]]:
    items = request.get("input", [])
    if isinstance(items, str):
        return [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ScriptError(400, "input: expected a string or a list of input items")
    return items


def _reasons(request: dict[str, Any]) -> bool:
    reasoning = request.get("reasoning")
    return isinstance(reasoning, dict) and reasoning.get("effort") != "none"


def check_input(request: dict[str, Any]) -> None:
    """Refuse (ScriptError 400) what the Responses API refuses of a stateless request."""
    if request.get("previous_response_id"):
        raise ScriptError(400, f"Previous response with id '{request['previous_response_id']}' not found. "
                               "(the scripted server keeps no state: send the whole conversation as input)")
    reasoned = False
    for index, item in enumerate(_items(request)):
        kind = item.get("type", "message")
        if kind == "reasoning":
            content = item.get("encrypted_content")
            if not content:
                raise ScriptError(400, f"Item with id '{item.get('id', '')}' not found. Items are not persisted when "
                                       "`store` is set to false. Try again with `store` set to true, or remove "
                                       "this item from your input.")
            if not is_sealed(str(content)):
                raise ScriptError(400, f"input[{index}]: The encrypted content for item {item.get('id', '')} "
                                       "could not be verified.")
            reasoned = True
        elif kind == "function_call":
            if _reasons(request) and not reasoned:
                raise ScriptError(400, f"input[{index}]: Item '{item.get('id') or item.get('call_id', '')}' of type "
                                       "'function_call' was provided without its required 'reasoning' item.")
        elif kind != "message" or item.get("role") != "assistant":
            reasoned = False  # a new turn of the user or a tool's output: the next answer reasons afresh


def _reasoning_text(task_id: str, channel: str, turn: int | None, message: dict[str, Any]) -> str:
    calls = [c["function"]["name"] for c in message.get("tool_calls") or ()]
    return (f"Turn {'-' if turn is None else turn} of {task_id} ({channel}): "
            + (f"next I call {', '.join(calls)}." if calls else "I can answer now."))


def _reasoning_item(request: dict[str, Any], text: str, where: str) -> dict[str, Any]:
    reasoning = request.get("reasoning") or {}
    item: dict[str, Any] = {"type": "reasoning", "id": f"rs_scripted-{where}",
                            "summary": [{"type": "summary_text", "text": text}] if reasoning.get("summary") else []}
    if _ENCRYPTED in (request.get("include") or ()):
        item["encrypted_content"] = seal(f"reasoning/{where}")
    return item


def responses_answer(request: dict[str, Any], message: dict[str, Any], *, policy: str, task_id: str,
                     channel: str, turn: int | None, auto_cache: bool = False) -> dict[str, Any]:
    """The Response carrying the policy's chat-completions `message`."""
    check_input(request)
    reasoning = request.get("reasoning")
    if reasoning is not None and (not isinstance(reasoning, dict)
                                  or reasoning.get("effort", "medium") not in (*REASONING_TOKENS, "none")):
        raise ScriptError(400, f"reasoning.effort: must be one of {', '.join(REASONING_TOKENS)}, none")
    where = f"{task_id}-{channel}-{'none' if turn is None else turn}"
    output: list[dict[str, Any]] = []
    text = _reasoning_text(task_id, channel, turn, message) if _reasons(request) else ""
    if text:
        output.append(_reasoning_item(request, text, where))
    if message.get("content"):
        output.append({"type": "message", "id": f"msg_scripted-{where}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
    for call in message.get("tool_calls") or ():
        output.append({"type": "function_call", "id": f"fc_{call['id']}", "call_id": call["id"],
                       "name": call["function"]["name"], "arguments": call["function"]["arguments"] or "{}",
                       "status": "completed"})
    items = _items(request)
    prompt = [request.get("instructions"), request.get("tools", []), items]
    input_tokens = estimate_tokens(prompt)
    cached = cached_tokens([prompt[0], prompt[1], items[:-1]]) if auto_cache else 0
    # The reasoning is billed by its text, not by the encrypted form it travels in.
    hidden = estimate_tokens(text) if text else 0
    output_tokens = estimate_tokens([i for i in output if i["type"] != "reasoning"]) + hidden
    return {
        "id": f"resp_scripted-{policy}-{where}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": f"scripted/{policy}",
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": {"effort": (reasoning or {}).get("effort"), "summary": (reasoning or {}).get("summary")},
        "store": request.get("store", True),
        "temperature": request.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "top_p": request.get("top_p", 1.0),
        "truncation": "disabled",
        "metadata": {},
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": hidden},
            "total_tokens": input_tokens + output_tokens,
        },
    }

