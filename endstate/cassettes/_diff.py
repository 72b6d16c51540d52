"""Reading cassettes: `show` one as text, `diff` two recordings of a task.

`diff` pairs interactions by channel, turn and attempt (the k-th request of a
turn), not by position, so one extra retry does not shift every later pair.
It judges responses by what the agent reads (status, message, tool calls,
finish reason), not by ids and timestamps that differ on every call.

The walk that finds where two keyed sequences first part (`first_difference`) is
public: the viewer uses it to mark the first turn where two transcripts differ.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple, TypeVar

import msgspec

from endstate.cassettes._format import INCOMPLETE, Interaction, Recording, load
from endstate.cassettes._render import request_lines, request_messages, response_lines

__all__ = ["show", "diff", "first_difference", "Difference"]

# Per-message content shown by `show`; `diff` shows everything but caps its output.
_SHOW_LIMIT = 1200
_DIFF_LINES = 300


def show(path: str | os.PathLike[str]) -> str:
    """The cassette as text: its header, then each interaction's new messages and its answer.

    Raises CassetteError when the file is not a readable cassette.
    """
    recording = load(path)
    lines = _header_lines(recording)
    last_messages: dict[str, tuple[int, list[object]]] = {}
    for index, interaction in enumerate(recording.interactions):
        request = interaction.request
        lines += ["", _title(index, interaction)]
        messages = request_messages(request.body)
        skip, since = 0, ""
        previous = last_messages.get(request.channel)
        if messages is not None:
            # Each request re-sends the conversation: show what is new since this channel's last one.
            if previous is not None and messages[: len(previous[1])] == previous[1]:
                skip, since = len(previous[1]), f"#{previous[0]}"
            last_messages[request.channel] = (index, messages)
        lines.append("  request:")
        lines += [f"    {line}" for line in request_lines(request.body, limit=_SHOW_LIMIT, skip=skip,
                                                                 skipped_from=since)]
        lines.append("  response:")
        lines += [
            f"    {line}"
            for line in response_lines(interaction.response.status, interaction.response.body, limit=_SHOW_LIMIT,
                                       usage=True)
        ]
    return "\n".join(lines) + "\n"


def diff(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> tuple[bool, str]:
    """Find the first interaction where two recordings differ.

    Returns (True, "identical: N interactions"), or (False, text) where text names
    the interaction and holds unified diffs of the request and of the response.
    Raises CassetteError when either file is not a readable cassette.
    """
    left, right = load(a), load(b)
    notes = _header_notes(left, right)
    found = first_difference(_keyed(left), _keyed(right), _same)
    if found is None:
        return True, f"identical: {len(left.interactions)} interactions"
    key, i, j = found
    one = left.interactions[i] if i is not None else None
    other = right.interactions[j] if j is not None else None
    if other is None:
        where = f"{_where(key)} (#{i}) is only in {left.path}"
    elif one is None:
        where = f"{_where(key)} (#{j}) is only in {right.path}"
    else:
        where = f"first difference at {_where(key)} (#{i} in {left.path}, #{j} in {right.path})"
    return False, _report(notes, where, one, other, left, right)


K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Difference(NamedTuple):
    """Where two keyed sequences first differ: the key, and its position on each side
    (None on the side that lacks the key)."""

    key: object
    left: int | None
    right: int | None


def first_difference(left: Sequence[tuple[K, T]], right: Sequence[tuple[K, T]],
                     same: Callable[[T, T], bool]) -> Difference | None:
    """The first key, in left's order, that is missing on the right or whose items are
    not `same`; then the first key only on the right. None when they agree throughout.

    Pairing by key rather than by position keeps one extra item (a retry, a turn)
    from making every later pair differ.
    """
    right_at = {key: (j, item) for j, (key, item) in enumerate(right)}
    for i, (key, item) in enumerate(left):
        other = right_at.get(key)
        if other is None:
            return Difference(key, i, None)
        if not same(item, other[1]):
            return Difference(key, i, other[0])
    left_keys = {key for key, _ in left}
    for j, (key, _) in enumerate(right):
        if key not in left_keys:
            return Difference(key, None, j)
    return None


def _header_lines(recording: Recording) -> list[str]:
    header, count = recording.header, len(recording.interactions)
    state = "complete" if recording.complete else INCOMPLETE
    lines = [
        f"cassette {recording.path}",
        f"  format {header.format_version}, endstate {header.endstate_version}, created {header.created}",
        f"  model {header.model}",
        f"  task {header.task_id} (task hash {header.task_hash[:16]})",
        f"  image {header.image_id or '-'}",
        f"  settings {_settings_text(header)}",
        f"  {count} interaction{'s' if count != 1 else ''}, {state}",
    ]
    if header.parent:
        at = f"live from agent turn {header.fork_at}" if header.fork_at is not None else "never went live"
        lines.insert(-1, f"  forked from cassette {header.parent[:16]} (sha256): {at}")
    if recording.end is not None and recording.end.error:
        lines.append(f"  the recording session ended with {recording.end.error}")
    return lines


def _title(index: int, interaction: Interaction) -> str:
    request, response = interaction.request, interaction.response
    turn = request.turn if request.turn is not None else "?"
    return (f"#{index} {request.channel} turn {turn}  {request.request_hash[:16]}  "
            f"{request.method} {request.path} -> {response.status}")


Key = tuple[str, int | None, int]


def _keyed(recording: Recording) -> list[tuple[Key, Interaction]]:
    """Interactions keyed by (channel, turn, attempt), in recorded order."""
    seen: Counter[tuple[str, int | None]] = Counter()
    keyed = []
    for interaction in recording.interactions:
        slot = (interaction.request.channel, interaction.request.turn)
        keyed.append(((*slot, seen[slot]), interaction))
        seen[slot] += 1
    return keyed


def _where(key: Key) -> str:
    channel, turn, attempt = key
    return f"{channel} turn {turn if turn is not None else '?'}" + (f" attempt {attempt + 1}" if attempt else "")


def _answer(interaction: Interaction) -> list[str]:
    return response_lines(interaction.response.status, interaction.response.body, limit=None)


def _same(one: Interaction, other: Interaction) -> bool:
    return one.request.request_hash == other.request.request_hash and _answer(one) == _answer(other)


def _header_notes(left: Recording, right: Recording) -> list[str]:
    notes = []
    for field in ("task_id", "task_hash", "model", "image_id", "endstate_version"):
        one, other = getattr(left.header, field), getattr(right.header, field)
        if one != other:
            notes.append(f"note: {field} differs: {one} vs {other}")
    if left.header.settings != right.header.settings:
        notes.append(f"note: settings differ: {_settings_text(left.header)} vs {_settings_text(right.header)}")
    return notes


def _settings_text(header) -> str:
    if header.settings is None:
        return "- (format 1 does not record them)"
    return ", ".join(f"{name} {value}" for name, value in msgspec.structs.asdict(header.settings).items()
                     if value is not msgspec.UNSET)  # a setting left off is not shown, as it is not recorded


def _report(notes: list[str], where: str, one: Interaction | None, other: Interaction | None,
            left: Recording, right: Recording) -> str:
    lines = [*notes, where]
    if one is not None and other is not None and one.request.request_hash == other.request.request_hash:
        lines.append("requests: identical")
    else:
        lines.append("request:")
        lines += _unified(
            request_lines(one.request.body, limit=None) if one else [],
            request_lines(other.request.body, limit=None) if other else [],
            left.path, right.path,
        )
    one_answer, other_answer = (_answer(one) if one else []), (_answer(other) if other else [])
    if one_answer == other_answer:
        lines.append("responses: identical")
    else:
        lines.append("response:")
        lines += _unified(one_answer, other_answer, left.path, right.path)
    return "\n".join(lines) + "\n"


def _unified(one: list[str], other: list[str], one_name: str, other_name: str) -> list[str]:
    lines = list(difflib.unified_diff(one, other, one_name, other_name, n=3, lineterm=""))
    if not lines:
        return ["  (they read the same; they differ in bytes this summary does not show)"]
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"… {len(lines) - _DIFF_LINES} more diff lines"]
    return lines
