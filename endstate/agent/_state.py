"""What an agent run carries from step to step, and the journal that keeps it.

The journal lives outside the sandbox and is rewritten (atomically) before and
after every tool call, so a process killed at any moment can be resumed by a new
one from the last record.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from endstate.guards import Guards
from endstate.models import Message, Scrubber, ToolCall

__all__ = ["Counters", "Pending", "RunState", "Journal", "Guards"]


class Counters(msgspec.Struct):
    """Everything a task's `requires` may bound; recorded by the harness, not the model."""

    steps: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    denied_calls: int = 0
    compaction_events: int = 0
    resumes: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: HTTP retries made (the SDK's and rate-limit waits; not boundable; reported on the card).
    retries: int = 0
    #: Of input_tokens, those read from and written to the provider's prompt cache.
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    #: Of output_tokens, the model's hidden reasoning.
    reasoning_tokens: int = 0
    #: Rate-limited answers (429, 529, overloaded) waited out.
    rate_limit_waits: int = 0


class Pending(msgspec.Struct, frozen=True):
    """A tool call that was about to run, with the workspace hash just before it."""

    call: ToolCall
    tree_hash_before: str


class RunState(msgspec.Struct):
    #: The task's prompt, kept apart so compaction can restate it.
    prompt: str
    messages: list[Message]
    counters: Counters
    #: Index of the next agent-channel request (0-based).
    turn: int = 0
    pending: Pending | None = None
    #: Input + output tokens of the last completion, for the context estimate.
    last_context_tokens: int = 0
    #: How many messages the last completion saw (its input) plus its answer.
    last_context_messages: int = 0


class Journal:
    """The run state on disk, with the run's secret values scrubbed (a server may echo a
    key into the conversation). A process resumed from it sees the placeholder, as
    replay of the recording does, so both send the same requests."""

    def __init__(self, path: Path, scrubber: Scrubber | None = None) -> None:
        self.path = Path(path)
        self.scrubber = scrubber or Scrubber()

    def write(self, state: RunState) -> None:
        tmp = self.path.with_suffix(".tmp")
        try:
            tmp.write_bytes(self.scrubber.json(state))
            os.replace(tmp, self.path)
        except OSError:  # a full disk: the last good journal stays, and no half-written copy beside it
            tmp.unlink(missing_ok=True)
            raise

    def read(self) -> RunState | None:
        if not self.path.exists():
            return None
        return msgspec.json.decode(self.path.read_bytes(), type=RunState)
