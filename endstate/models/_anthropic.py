"""The Anthropic Messages adapter: anthropic/ specs.

The transcript maps onto the Messages API as follows: system messages become
the separate `system` parameter; an assistant's tool calls become `tool_use`
blocks; tool results become `tool_result` blocks in a user turn (consecutive
results share one turn, as the API expects). Answers are decoded strictly from
the response bytes, as in the OpenAI adapter.

With `thinking_budget` set, extended thinking is asked for; the thinking and
redacted_thinking blocks of each answer are kept on the transcript message, with
their signatures, and sent back verbatim ahead of its text and tool_use blocks, as
the API requires on tool-use turns. With `prompt_cache` set, cache breakpoints
(`cache_control`) go on the system prompt, the last tool and the last block of the
latest turn: each request then reads everything before its newest turn from the
cache. Usage keeps what the cache read and wrote; `input_tokens` in the transcript
is the whole prompt (the API's own excludes the cached parts).

No sampling settings are sent: the Messages API version that SDK 2.x speaks
refuses temperature, top_p and top_k outright (even at their defaults), and the
SDK has dropped them. RunSettings.temperature and .seed therefore do not apply to
anthropic/ models; the benchmark card still records them.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import anthropic
import msgspec

from endstate.models._sdk import SDKErrors, SDKModel
from endstate.models._settings import completion_headers
from endstate.models._types import Channel, Completion, Message, Thinking, ToolCall, ToolSchema, Usage

__all__ = ["AnthropicModel", "to_wire"]

_TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


# The slice of a Messages API response the adapter reads. Blocks of other types
# (server tools) decode too and are skipped.
class _WireBlock(msgspec.Struct):
    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] = {}
    thinking: str = ""
    signature: str = ""
    data: str = ""


class _WireUsage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _WireMessage(msgspec.Struct):
    content: list[_WireBlock]
    stop_reason: str | None = None
    usage: _WireUsage | None = None


_decoder = msgspec.json.Decoder(_WireMessage)


class AnthropicModel(SDKModel):
    """A Model speaking the Anthropic Messages API, non-streaming."""

    errors = SDKErrors(anthropic.APIStatusError, anthropic.APITimeoutError, anthropic.APIConnectionError,
                       anthropic.AnthropicError)

    def __init__(self, spec: str, *, provider: str = "anthropic", **options: Any) -> None:
        self.provider = provider  # "scripted-anthropic" for the control arms through the Messages API
        super().__init__(spec, **options)

    @property
    def key_env(self) -> str | None:
        return "ANTHROPIC_API_KEY" if self.provider == "anthropic" else None

    def _make_client(self, options: dict[str, Any]) -> anthropic.Anthropic:
        return anthropic.Anthropic(**options)

    def complete(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        channel: Channel,
        turn: int,
        tool_choice: Literal["auto", "required", "none"] = "auto",
    ) -> Completion:
        settings = self.settings
        cache = settings.prompt_cache is True
        system, turns = to_wire(messages, cache=cache)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": settings.max_output_tokens,
        }
        if system:
            params["system"] = [{"type": "text", "text": system, **_CACHED}] if cache else system
        if tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
            if cache:
                params["tools"][-1].update(_CACHED)
            params["tool_choice"] = {"type": _TOOL_CHOICE[tool_choice]}
        if settings.thinking_budget is not msgspec.UNSET:
            params["thinking"] = {"type": "enabled", "budget_tokens": settings.thinking_budget}
            # With thinking on the API takes only auto or none: a required call is asked
            # for by the loop's finish tool and prompt instead.
            if tools and tool_choice == "required":
                params["tool_choice"] = {"type": "auto"}
        def create() -> tuple[bytes, int]:
            raw = self._client.messages.with_raw_response.create(**params, extra_headers=completion_headers(channel, turn))
            return raw.read(), raw.status_code

        body, status, waits = self._send(channel, turn, create)
        return self._decode(body, status, self._counter.retries(channel, turn), waits)

    def _decode(self, body: bytes, status: int, retries: int, waits: int = 0) -> Completion:
        hint = "check that the base URL is the Messages API root (without /v1)"
        try:
            wire = _decoder.decode(body)
        except msgspec.ValidationError as exc:
            raise self._error(f"HTTP {status} with JSON that is not a message ({exc})", status, retries, hint) from None
        except msgspec.DecodeError:
            raise self._error(
                f"HTTP {status} with a body that is not JSON: {body[:120]!r}", status, retries, hint
            ) from None
        text = "".join(block.text for block in wire.content if block.type == "text")
        calls = tuple(
            ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input))
            for block in wire.content
            if block.type == "tool_use"
        )
        thinking = tuple(
            Thinking(kind="thinking", text=block.thinking, signature=block.signature) if block.type == "thinking"
            else Thinking(kind="redacted_thinking", data=block.data)
            for block in wire.content
            if block.type in ("thinking", "redacted_thinking")
        )
        usage = wire.usage or _WireUsage()
        read, written = usage.cache_read_input_tokens or 0, usage.cache_creation_input_tokens or 0
        return Completion(
            message=Message(role="assistant", content=text, tool_calls=calls, thinking=thinking),
            usage=Usage(input_tokens=(usage.input_tokens or 0) + read + written, output_tokens=usage.output_tokens or 0,
                        cached_input_tokens=read, cache_write_tokens=written),
            finish_reason=wire.stop_reason or "",
            retries=retries,
            waits=waits,
        )


_CACHED = {"cache_control": {"type": "ephemeral"}}


def to_wire(messages: list[Message], *, cache: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The transcript as (system prompt, Messages API turns); with `cache`, the last
    block of the last turn carries a cache breakpoint."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if cache and turns:
        last = turns[-1]["content"][-1]
        turns[-1]["content"][-1] = {**last, **_CACHED}
    return system, turns


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}]
    blocks: list[dict[str, Any]] = [
        {"type": "thinking", "thinking": t.text, "signature": t.signature} if t.kind == "thinking"
        else {"type": "redacted_thinking", "data": t.data}
        for t in message.thinking
    ]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _arguments(call.arguments)})
    return blocks


def _arguments(text: str) -> dict[str, Any]:
    # tool_use input must be an object; a call another provider sent as malformed
    # JSON is kept verbatim so the transcript still says what was asked.
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {"_unparsed_arguments": text}
    return value if isinstance(value, dict) else {"_unparsed_arguments": text}
