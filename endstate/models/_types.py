"""Messages, tool calls and completions: the provider-neutral transcript."""

from __future__ import annotations

from typing import Any, Literal, Protocol

import msgspec

__all__ = [
    "Thinking",
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


class Thinking(msgspec.Struct, frozen=True, omit_defaults=True):
    """A block of the model's own reasoning, kept exactly as the provider sent it.

    Anthropic's extended thinking (`kind` "thinking": readable `text` and its
    `signature`; "redacted_thinking": the encrypted `data` alone). A Responses API
    reasoning item (`kind` "reasoning"): `data` is the item's JSON as the API sent it
    (its encrypted content within), `text` its summary, for reading only. The provider
    checks the signature or encrypted content when the block comes back, so nothing
    here is ever edited.
    """

    kind: Literal["thinking", "redacted_thinking", "reasoning"]
    text: str = ""
    signature: str = ""
    data: str = ""


class Message(msgspec.Struct, frozen=True, omit_defaults=True):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    #: For role "tool": the call this is the result of.
    tool_call_id: str = ""
    #: For role "assistant": the reasoning blocks that came before the answer, in order.
    thinking: tuple[Thinking, ...] = ()


class Usage(msgspec.Struct, frozen=True):
    """Tokens of one completion. `input_tokens` counts the whole prompt, cached or not;
    `cached_input_tokens` and `cache_write_tokens` are the parts of it read from and
    written to the provider's prompt cache; `output_tokens` includes `reasoning_tokens`."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class Completion(msgspec.Struct, frozen=True):
    message: Message
    usage: Usage
    #: The provider's own finish reason ("stop", "tool_calls", "length", ...).
    finish_reason: str = ""
    #: HTTP retries made for this completion (the SDK's, and each rate-limited answer waited out).
    retries: int = 0
    #: Rate-limited answers (429, 529, overloaded) waited out before this one.
    waits: int = 0


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
