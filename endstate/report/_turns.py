"""Transcripts as turns, and the first turn where two of them differ.

A turn is what one model call produced and what the harness answered: an
assistant message and the tool results (or user messages) after it, up to the next
assistant message. Row 0 is the prompt, everything before the first assistant
message; row n is agent turn n-1, the number `cassette show`, `cassette diff` and a
fork's `live from turn K` give the same model call. The viewer's script splits a
transcript by the same rule and labels the rows so, so the row marked here is the one
it draws.

Two turns are the same when they read the same to a reviewer: roles, text, tool
names and arguments, tool output. Tool call ids are left out, as `cassette diff`
leaves out ids that differ on every call; the walk that pairs turns by number and
finds the first difference is `cassette diff`'s own (`first_difference`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec

from endstate.cassettes import first_difference

__all__ = ["split_turns", "turn_keys", "first_differing_turn"]

_encode = msgspec.json.Encoder(order="sorted").encode


def split_turns(messages: Sequence[dict]) -> list[list[dict]]:
    turns: list[list[dict]] = [[]]
    for message in messages:
        if message.get("role") == "assistant":
            turns.append([])
        turns[-1].append(message)
    return turns


def _readable(message: dict) -> list:
    calls = [[c.get("name"), c.get("arguments")] for c in message.get("tool_calls") or []]
    return [message.get("role"), message.get("content") or "", calls]


def turn_keys(messages: Sequence[dict] | None) -> list[tuple[int, bytes]] | None:
    """Turn number -> a short digest of what the turn reads as; None without a transcript.

    Digests, not the turns, so a view of thousands of tasks keeps one small value per
    turn in memory while it pairs them.
    """
    if messages is None:
        return None
    return [(n, hashlib.blake2b(_encode([_readable(m) for m in turn]), digest_size=12).digest())
            for n, turn in enumerate(split_turns(messages))]


def first_differing_turn(base: list[tuple[int, bytes]] | None, cand: list[tuple[int, bytes]] | None) -> int | None:
    """The first turn where the transcripts differ (one side lacking it counts); None
    when they read the same or either is missing."""
    if base is None or cand is None:
        return None
    found = first_difference(base, cand, bytes.__eq__)
    return None if found is None else found.key
