"""Messages, tool calls and completions: the provider-neutral transcript."""

from __future__ import annotations

from typing import Any, Literal, Protocol

import msgspec

__all__ = [
    "ToolCall",
    "Message",
    "Usage",
    "Completion",
    "ToolSchema",
    "Model",
    "Channel",
]

#: Which conversation a request belongs to: the agent's turns, or a compaction summary.
Channel = Literal["agent", "compaction"]


class ToolCall(msgspec.Struct, frozen=True, omit_defaults=True):
    id: str
    name: str
    #: The arguments exactly as the model sent them (a JSON text, possibly malformed).
    arguments: str


class Message(msgspec.Struct, frozen=True, omit_defaults=True):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    #: For role "tool": the call this is the result of.
    tool_call_id: str = ""


class Usage(msgspec.Struct, frozen=True):
    input_tokens: int = 0
    output_tokens: int = 0


class Completion(msgspec.Struct, frozen=True):
    message: Message
    usage: Usage
    #: The provider's own finish reason ("stop", "tool_calls", "length", ...).
    finish_reason: str = ""
    #: HTTP retries the SDK made for this completion.
    retries: int = 0


class ToolSchema(msgspec.Struct, frozen=True):
    name: str
    description: str
    #: JSON Schema of the arguments object.
    parameters: dict[str, Any]


class Model(Protocol):
    """One provider's chat API, reduced to what the agent loop needs.

    `complete` raises ModelError (endstate.models) for a provider failure that
    retries did not cure; the loop turns it into an ERROR outcome for the task.
    """

    spec: str

    def complete(
        self,
        messages: list[Message],
        tools: list[ToolSchema],
        *,
        channel: Channel,
        turn: int,
        tool_choice: Literal["auto", "required", "none"] = "auto",
    ) -> Completion: ...

    def close(self) -> None: ...
