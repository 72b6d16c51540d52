"""The session journal: what a killed agent process leaves for the one that resumes it.

One JSON event a line in the task's work folder: which cassette the session opened
(and in which mode), each recorded answer played, and a last line when it closed in
order. A resumed process reads it to append to its recording, or to skip the answers
the killed one already played.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import msgspec

from endstate.cassettes._format import Header

__all__ = ["SIDECAR_NAME", "Sidecar", "header_id"]

#: The session journal's file name inside `state_dir`.
SIDECAR_NAME = "cassette-session.jsonl"


class _Event(msgspec.Struct, omit_defaults=True):
    cassette: str = ""
    mode: str = ""
    id: str = ""
    played: int | None = None
    #: A fork went live at this agent turn.
    live: int | None = None
    closed: bool = False


_event_decoder = msgspec.json.Decoder(_Event)


class _Journal(msgspec.Struct):
    cassette: str = ""
    mode: str = ""
    id: str = ""
    played: set[int] = set()
    live: int | None = None
    closed: bool = True

    def is_open(self, path: Path, mode: str, identity: str | None = None) -> bool:
        return (not self.closed and self.cassette == str(path.resolve()) and self.mode == mode
                and (identity is None or self.id == identity))


class Sidecar:
    """An append-only journal of one task's cassette session, one JSON event a line.

    The first line names the cassette; then one line per answer played; a last
    line when the session closes in order. A killed process leaves no last line.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> _Journal:
        try:
            lines = self.path.read_bytes().splitlines()
        except FileNotFoundError:
            return _Journal()
        journal = _Journal(closed=False)
        for number, line in enumerate(lines):
            try:
                event = _event_decoder.decode(line)
            except msgspec.DecodeError:
                if number == len(lines) - 1:
                    break  # the kill came mid-line
                return _Journal()
            if event.cassette:
                journal = _Journal(cassette=event.cassette, mode=event.mode, id=event.id, played=set(), closed=False)
            if event.played is not None:
                journal.played.add(event.played)
            if event.live is not None:
                journal.live = event.live
            journal.closed = journal.closed or event.closed
        return journal

    def start(self, cassette: Path, mode: str, identity: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_bytes(msgspec.json.encode(_Event(cassette=str(cassette.resolve()), mode=mode, id=identity))
                              + b"\n")

    def played(self, index: int) -> None:
        self._append(_Event(played=index))

    def live(self, turn: int) -> None:
        self._append(_Event(live=turn))

    def close(self) -> None:
        self._append(_Event(closed=True))

    def _append(self, event: _Event) -> None:
        with self.path.open("ab") as out:
            out.write(msgspec.json.encode(event) + b"\n")


def header_id(header: Header) -> str:
    return hashlib.sha256(msgspec.msgpack.encode(header)).hexdigest()[:16]
