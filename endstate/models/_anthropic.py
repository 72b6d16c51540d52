"""The Anthropic Messages adapter: anthropic/ specs.

The transcript maps onto the Messages API as follows: system messages become
the separate `system` parameter; an assistant's tool calls become `tool_use`
blocks; tool results become `tool_result` blocks in a user turn (consecutive
results share one turn, as the API expects). Answers are decoded strictly from
the response bytes, as in the OpenAI adapter.

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
from endstate.models._types import Channel, Completion, Message, ToolCall, ToolSchema, Usage

__all__ = ["AnthropicModel", "to_wire"]

_TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


# The slice of a Messages API response the adapter reads. Blocks of other types
# (thinking, server tools) decode too and are skipped.
class _WireBlock(msgspec.Struct):
    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    input: dict[str, Any] = {}


class _WireUsage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None


class _WireMessage(msgspec.Struct):
    content: list[_WireBlock]
    stop_reason: str | None = None
    usage: _WireUsage | None = None


_decoder = msgspec.json.Decoder(_WireMessage)


class AnthropicModel(SDKModel):
    """A Model speaking the Anthropic Messages API, non-streaming."""

    provider = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    errors = SDKErrors(anthropic.APIStatusError, anthropic.APITimeoutError, anthropic.APIConnectionError,
                       anthropic.AnthropicError)

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
        system, turns = to_wire(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": self.settings.max_output_tokens,
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
            params["tool_choice"] = {"type": _TOOL_CHOICE[tool_choice]}
        self._counter.start(channel, turn)
        with self._sdk_errors(channel, turn):
            raw = self._client.messages.with_raw_response.create(
                **params, extra_headers=completion_headers(channel, turn)
            )
            body, status = raw.read(), raw.status_code
        return self._decode(body, status, self._counter.retries(channel, turn))

    def _decode(self, body: bytes, status: int, retries: int) -> Completion:
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
        usage = wire.usage or _WireUsage()
        return Completion(
            message=Message(role="assistant", content=text, tool_calls=calls),
            usage=Usage(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0),
            finish_reason=wire.stop_reason or "",
            retries=retries,
        )


def to_wire(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """The transcript as (system prompt, Messages API turns)."""
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
    return system, turns


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}]
    blocks: list[dict[str, Any]] = []
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
