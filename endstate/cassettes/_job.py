"""What a task's agent process is told about its cassette: record or replay, where, how to match."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["CassetteJob"]


class CassetteJob(msgspec.Struct, frozen=True):
    #: "record" writes interactions as they happen; "replay" answers from the file only.
    mode: str
    path: str
    match: str = "strict"
    header: dict[str, Any] = {}
    #: Record over an existing cassette (the resumed attempt of a killed run appends instead).
    overwrite: bool = False
