"""The OpenAI chat-completions adapter: openai/, openai-compatible/ and scripted/ specs.

Requests go through the official SDK (so through httpx2, where vcrpy records and
replays them). The answer is decoded here, strictly, from the response bytes
rather than from the SDK's lenient models: a body that is not a chat completion
becomes a ModelError that says so, instead of a half-empty object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import msgspec
import openai

from endstate.models._sdk import SDKErrors, SDKModel
from endstate.models._settings import RunSettings, completion_headers
from endstate.models._types import Channel, Completion, Message, ToolCall, ToolSchema, Usage

__all__ = ["OpenAIChatModel", "to_wire", "tool_to_wire"]


# The slice of the chat-completions response the adapter reads; other fields are ignored.
class _WireFunction(msgspec.Struct):
    name: str
    # Some compatible servers send the arguments as an object instead of a JSON text.
    arguments: str | dict[str, Any] = ""


class _WireToolCall(msgspec.Struct):
    id: str
    function: _WireFunction


class _WireMessage(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_WireToolCall] | None = None


class _WireChoice(msgspec.Struct):
    message: _WireMessage
    finish_reason: str | None = None


class _WirePromptDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _WireCompletionDetails(msgspec.Struct):
    reasoning_tokens: int | None = None


class _WireUsage(msgspec.Struct):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _WirePromptDetails | None = None
    completion_tokens_details: _WireCompletionDetails | None = None


class _WireCompletion(msgspec.Struct):
    choices: list[_WireChoice] | None = None
    usage: _WireUsage | None = None


_decoder = msgspec.json.Decoder(_WireCompletion)


class OpenAIChatModel(SDKModel):
    """A Model speaking the chat-completions API, non-streaming."""

    errors = SDKErrors(openai.APIStatusError, openai.APITimeoutError, openai.APIConnectionError, openai.OpenAIError)

    def __init__(
        self,
        spec: str,
        *,
        provider: str,
        model: str,
        settings: RunSettings,
        api_key: str,
        base_url: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        **limits: Any,
    ) -> None:
        self.provider = provider
        super().__init__(spec, model=model, settings=settings, api_key=api_key, base_url=base_url,
                         extra_headers=extra_headers, **limits)

    def _make_client(self, options: dict[str, Any]) -> openai.OpenAI:
        return openai.OpenAI(**options)

    @property
    def key_env(self) -> str | None:
        return "OPENAI_API_KEY" if self.provider in ("openai", "openai-compatible") else None

    def complete(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        channel: Channel,
        turn: int,
        tool_choice: Literal["auto", "required", "none"] = "auto",
    ) -> Completion:
        params: dict[str, Any] = {
            "model": self.model,
            # llama-cpp-python's server answers HTTP 500 to a null content (its
            # request schema wants a string, its tool-call template reads the field).
            "messages": [to_wire(m, empty_content="" if self.provider == "openai-compatible" else None)
                         for m in messages],
            "temperature": self.settings.temperature,
        }
        # OpenAI itself has retired max_tokens for newer models; compatible servers
        # mostly know only max_tokens.
        tokens_key = "max_completion_tokens" if self.provider == "openai" else "max_tokens"
        params[tokens_key] = self.settings.max_output_tokens
        if self.settings.seed is not None:
            params["seed"] = self.settings.seed
        if self.settings.reasoning_effort is not msgspec.UNSET:
            params["reasoning_effort"] = self.settings.reasoning_effort
        if tools:
            params["tools"] = [tool_to_wire(t) for t in tools]
            params["tool_choice"] = tool_choice
        def create() -> tuple[bytes, int]:
            raw = self._client.chat.completions.with_raw_response.create(
                **params, extra_headers=completion_headers(channel, turn)
            )
            return raw.content, raw.status_code

        body, status, waits = self._send(channel, turn, create)
        return self._decode(body, status, self._counter.retries(channel, turn), waits)

    def _decode(self, body: bytes, status: int, retries: int, waits: int = 0) -> Completion:
        hint = "check that the base URL is the chat-completions API root (often ending in /v1)"
        try:
            wire = _decoder.decode(body)
        except msgspec.ValidationError as exc:
            raise self._error(
                f"HTTP {status} with JSON that is not a chat completion ({exc})", status, retries, hint
            ) from None
        except msgspec.DecodeError:
            raise self._error(
                f"HTTP {status} with a body that is not JSON: {body[:120]!r}", status, retries, hint
            ) from None
        if not wire.choices:
            raise self._error(f"HTTP {status} with no choices in the answer", status, retries,
                              "the server produced nothing: check the model name, or rerun")
        choice = wire.choices[0]
        calls = tuple(
            ToolCall(
                id=call.id,
                name=call.function.name,
                arguments=call.function.arguments
                if isinstance(call.function.arguments, str)
                else json.dumps(call.function.arguments),
            )
            for call in choice.message.tool_calls or ()
        )
        usage = wire.usage or _WireUsage()
        cached = usage.prompt_tokens_details.cached_tokens if usage.prompt_tokens_details else None
        reasoning = usage.completion_tokens_details.reasoning_tokens if usage.completion_tokens_details else None
        return Completion(
            message=Message(role="assistant", content=choice.message.content or "", tool_calls=calls),
            usage=Usage(input_tokens=usage.prompt_tokens or 0, output_tokens=usage.completion_tokens or 0,
                        cached_input_tokens=cached or 0, reasoning_tokens=reasoning or 0),
            finish_reason=choice.finish_reason or "",
            retries=retries,
            waits=waits,
        )


def to_wire(message: Message, *, empty_content: str | None = None) -> dict[str, Any]:
    """One transcript message in the chat-completions request format.

    `empty_content` is what an assistant message with tool calls and no text sends
    as its content.
    """
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            # The API wants null, not "", beside tool calls with no text.
            "content": message.content or empty_content,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def tool_to_wire(tool: ToolSchema) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }
