"""What a task's agent process is told about its cassette: record or replay, where, how to match."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["CassetteJob", "BUFFERED_STREAM_HEADER"]

#: Set on a streamed request by a caller that reads the answer whole (the foreign-agent proxy):
#: vcrpy's buffering then loses nothing, and the recorded body keeps every server-sent event as
#: the server sent it. A streamed request without it is refused (the SDKs read streams lazily).
BUFFERED_STREAM_HEADER = "X-Endstate-Buffered-Stream"


class CassetteJob(msgspec.Struct, frozen=True):
    #: "record" writes interactions as they happen; "replay" answers from the file only.
    mode: str
    path: str
    match: str = "strict"
    header: dict[str, Any] = {}
    #: Record over an existing cassette (the resumed attempt of a killed run appends instead).
    overwrite: bool = False
