"""What a task's agent process is told about its cassette: record or replay, where, how to match."""

from __future__ import annotations

import enum
from typing import Any

import msgspec

__all__ = ["CassetteJob", "BUFFERED_STREAM_HEADER", "Provenance", "ProvenanceMode", "RunMode", "FIRST_DIVERGENCE",
           "LAST_TURN"]

#: `fork_at` of a fork that goes live at the first request the parent has no answer for.
FIRST_DIVERGENCE = -1
#: `fork_at` of a fork that answers the parent's last agent turn live (`--fork-at last`).
LAST_TURN = -2

#: Set on a streamed request by a caller that reads the answer whole (the foreign-agent proxy):
#: vcrpy's buffering then loses nothing, and the recorded body keeps every server-sent event as
#: the server sent it. A streamed request without it is refused (the SDKs read streams lazily).
BUFFERED_STREAM_HEADER = "X-Endstate-Buffered-Stream"


class RunMode(enum.StrEnum):
    """Where a run's model answers come from; the card and the run's messages hold the value."""

    #: From the model, written nowhere.
    LIVE = "live"
    #: From the model, each interaction written to a cassette as it happens.
    RECORD = "record"
    #: From the cassettes only.
    REPLAY = "replay"


class ProvenanceMode(enum.StrEnum):
    """Where one task's answers came from (a task's `provenance` in results.json)."""

    REPLAYED = "replayed"  # every answer from the cassette
    LIVE = "live"  # none
    FORKED = "forked"  # replayed, then live


class CassetteJob(msgspec.Struct, frozen=True):
    #: RECORD writes interactions as they happen; REPLAY answers from the file only.
    mode: RunMode
    path: str
    match: str = "strict"
    header: dict[str, Any] = {}
    #: Record over an existing cassette (the resumed attempt of a killed run appends instead).
    overwrite: bool = False
    #: A fork (record mode): the parent cassette whose answers are served before `fork_at`.
    parent: str = ""
    #: The first agent turn answered live; FIRST_DIVERGENCE: the first the parent cannot answer;
    #: LAST_TURN: the parent's last.
    fork_at: int = FIRST_DIVERGENCE


class Provenance(msgspec.Struct, frozen=True, omit_defaults=True):
    """Where a task's model answers came from: replayed from a cassette, live, or both."""

    mode: ProvenanceMode
    #: Agent turns 0..replayed_turns-1 were answered from the cassette (or its parent).
    replayed_turns: int = 0
    #: The first agent turn answered live; None when no turn was.
    live_from: int | None = None
    #: sha256 of the parent cassette's bytes (a fork).
    parent: str = ""

    def describe(self) -> str:
        if self.mode == ProvenanceMode.FORKED:
            replayed = f"turns 0..{self.replayed_turns - 1} replayed" if self.replayed_turns else "nothing replayed"
            live = f"live from turn {self.live_from}" if self.live_from is not None else "no turn live"
            return f"forked: {replayed}, {live}"
        return "replayed: every turn from its cassette" if self.mode == ProvenanceMode.REPLAYED else "recorded live"
