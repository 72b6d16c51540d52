"""The OpenAI Responses API adapter: openai-responses/ and scripted-responses/ specs.

Every request is stateless: `store` is false and the whole transcript is sent as
`input` each turn (never `previous_response_id`), so a request says everything its
answer depends on and a cassette can key the answer by it. That is also how a
reasoning model's reasoning survives the tool turns without server state:
`include: ["reasoning.encrypted_content"]` asks for each reasoning item's encrypted
form, the item is kept on the transcript message exactly as it came (a Thinking of
kind "reasoning") and sent back ahead of that turn's function calls.

The transcript maps onto input items as follows: system and user messages become
messages of that role; an assistant message becomes its reasoning items, an
assistant message with its text, and a `function_call` item per tool call; a tool
result becomes a `function_call_output`. Usage keeps cached input and reasoning
tokens. Answers are decoded strictly from the response bytes, as in the other
adapters.

With `reasoning_effort` set it is sent as `reasoning.effort`, and the temperature
is not sent (reasoning models refuse it).
"""

from __future__ import annotations

import json
from typing import Any, Literal

import msgspec

from endstate.models._openai import OpenAIChatModel
from endstate.models._settings import completion_headers
from endstate.models._types import Channel, Completion, Message, Thinking, ToolCall, ToolSchema, Usage

__all__ = ["OpenAIResponsesModel", "to_input", "tool_to_wire"]


# The slice of a Response the adapter reads. Items of other types (built-in tools) decode too and are skipped.
class _WireContent(msgspec.Struct):
    type: str
    text: str = ""
    refusal: str = ""


class _WireSummary(msgspec.Struct):
    text: str = ""


class _WireItem(msgspec.Struct):
    type: str
    content: list[_WireContent] | None = None
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    summary: list[_WireSummary] | None = None


class _WireInputDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _WireOutputDetails(msgspec.Struct):
    reasoning_tokens: int | None = None


class _WireUsage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_details: _WireInputDetails | None = None
    output_tokens_details: _WireOutputDetails | None = None


class _WireIncomplete(msgspec.Struct):
    reason: str | None = None


class _WireResponse(msgspec.Struct):
    output: list[msgspec.Raw]
    status: str | None = None
    usage: _WireUsage | None = None
    incomplete_details: _WireIncomplete | None = None


_decoder = msgspec.json.Decoder(_WireResponse)
_item_decoder = msgspec.json.Decoder(_WireItem)


class OpenAIResponsesModel(OpenAIChatModel):
    """A Model speaking the Responses API, non-streaming and stateless."""

    @property
    def key_env(self) -> str | None:
        return "OPENAI_API_KEY" if self.provider == "openai-responses" else None

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
        params: dict[str, Any] = {
            "model": self.model,
            "input": to_input(messages),
            "max_output_tokens": settings.max_output_tokens,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        if settings.reasoning_effort is not msgspec.UNSET:
            params["reasoning"] = {"effort": settings.reasoning_effort}
        else:
            params["temperature"] = settings.temperature
        if tools:
            params["tools"] = [tool_to_wire(t) for t in tools]
            params["tool_choice"] = tool_choice

        def create() -> tuple[bytes, int]:
            raw = self._client.responses.with_raw_response.create(
                **params, extra_headers=completion_headers(channel, turn)
            )
            return raw.content, raw.status_code

        body, status, waits = self._send(channel, turn, create)
        return self._decode(body, status, self._counter.retries(channel, turn), waits)

    def _decode(self, body: bytes, status: int, retries: int, waits: int = 0) -> Completion:
        hint = "check that the base URL is the OpenAI API root (often ending in /v1) and serves /responses"
        try:
            wire = _decoder.decode(body)
            items = [(raw, _item_decoder.decode(raw)) for raw in wire.output]
        except msgspec.ValidationError as exc:
            raise self._error(f"HTTP {status} with JSON that is not a response ({exc})", status, retries,
                              hint) from None
        except msgspec.DecodeError:
            raise self._error(
                f"HTTP {status} with a body that is not JSON: {body[:120]!r}", status, retries, hint
            ) from None
        text, calls, thinking = [], [], []
        for raw, item in items:
            if item.type == "message":
                text += [part.text or part.refusal for part in item.content or () if part.type in ("output_text", "refusal")]
            elif item.type == "function_call":
                calls.append(ToolCall(id=item.call_id, name=item.name, arguments=item.arguments))
            elif item.type == "reasoning":
                summary = "\n\n".join(part.text for part in item.summary or () if part.text)
                thinking.append(Thinking(kind="reasoning", text=summary, data=bytes(raw).decode()))
        usage = wire.usage or _WireUsage()
        cached = usage.input_tokens_details.cached_tokens if usage.input_tokens_details else None
        reasoning = usage.output_tokens_details.reasoning_tokens if usage.output_tokens_details else None
        if calls:
            finish = "tool_calls"
        elif wire.status == "incomplete":
            finish = (wire.incomplete_details.reason if wire.incomplete_details else None) or "incomplete"
        else:
            finish = "stop"
        return Completion(
            message=Message(role="assistant", content="".join(text), tool_calls=tuple(calls), thinking=tuple(thinking)),
            usage=Usage(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
                        cached_input_tokens=cached or 0, reasoning_tokens=reasoning or 0),
            finish_reason=finish,
            retries=retries,
            waits=waits,
        )


def to_input(messages: list[Message]) -> list[dict[str, Any]]:
    """The transcript as Responses API input items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            items.append({"type": "function_call_output", "call_id": message.tool_call_id, "output": message.content})
        elif message.role != "assistant":
            items.append({"type": "message", "role": message.role, "content": message.content})
        else:
            # Reasoning items go back verbatim: the API checks their encrypted content.
            items += [json.loads(t.data) for t in message.thinking if t.kind == "reasoning"]
            if message.content or not message.tool_calls:
                items.append({"type": "message", "role": "assistant", "content": message.content})
            items += [{"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
                      for c in message.tool_calls]
    return items


def tool_to_wire(tool: ToolSchema) -> dict[str, Any]:
    return {"type": "function", "name": tool.name, "description": tool.description, "parameters": tool.parameters,
            "strict": False}

