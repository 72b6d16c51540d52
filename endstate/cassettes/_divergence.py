"""Why replay could not answer a request: the closest recorded request and how the two differ.

Said the way vcrpy's own errors are (the closest candidate and what differs), so a
ReplayDivergence tells the user which turn changed and what changed in it.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from endstate.cassettes._format import Recording
from endstate.cassettes._match import RequestKeys
from endstate.cassettes._render import request_lines
from endstate.errors import ReplayDivergence

if TYPE_CHECKING:
    from vcr.request import Request

__all__ = ["explain_divergence", "request_body"]

_DIFF_LINES = 40
_DIFF_WIDTH = 200


def explain_divergence(request: Request, recording: Recording, played: set[int], keys: RequestKeys, *,
                       match: str, task_id: str) -> ReplayDivergence:
    made_hash, channel, turn = keys.hash_of(request), keys.channel_of(request), keys.turn_of(request)
    interactions = recording.interactions
    where = f"{channel} turn {turn if turn is not None else '?'}"
    if match == "sequence":
        problem = f"all {sum(1 for i in interactions if i.request.channel == channel)} recorded {channel} answers " \
                  "have been played"
    else:
        problem = "no recorded request has its hash"
    same = [i for i, x in enumerate(interactions) if x.request.request_hash == made_hash]
    if same and match == "strict":
        problem = f"its recorded answer (#{same[0]}) was already played"
    closest = _closest(request, interactions, played, keys, same)
    lines = [
        f"replay diverged in task {task_id} at {where}: request {made_hash[:16]} has no recorded answer "
        f"({match} matching: {problem}).",
    ]
    summary = ""
    if closest is not None:
        other = interactions[closest].request
        state = "already played" if closest in played else "not played"
        summary = f"#{closest} {other.channel} turn {other.turn} {other.request_hash[:16]} ({state})"
        lines.append(f"closest recorded request: {summary}")
        lines += _body_diff(other.body, keys.scrubber.bytes(request_body(request)), f"recorded #{closest}",
                            "this request")
    lines.append("The harness, the task or the agent's inputs changed since the recording: re-record with "
                 "`endstate record`, or replay with --match sequence to serve answers in recorded order.")
    return ReplayDivergence("\n".join(lines), task=task_id, turn=turn, request_hash=made_hash, closest=summary)


def _closest(request: Request, interactions: list[Any], played: set[int], keys: RequestKeys,
             same_hash: list[int]) -> int | None:
    """The recorded request most like this one: same hash, else same channel and turn, else smallest diff."""
    if same_hash:
        return same_hash[0]
    channel, turn = keys.channel_of(request), keys.turn_of(request)
    candidates = [i for i, x in enumerate(interactions) if x.request.channel == channel]
    candidates = candidates or list(range(len(interactions)))
    if not candidates:
        return None
    same_turn = [i for i in candidates if interactions[i].request.turn == turn]
    if same_turn:
        return min(same_turn, key=lambda i: (i in played, i))
    made = request_lines(keys.scrubber.bytes(request_body(request)), limit=None)

    def distance(index: int) -> tuple[float, bool, int]:
        recorded = request_lines(interactions[index].request.body, limit=None)
        return (-difflib.SequenceMatcher(None, recorded, made, autojunk=False).ratio(), index in played, index)

    return min(candidates[:64], key=distance)


def request_body(request: Request) -> bytes:
    body = request.body
    if body is None:
        return b""
    if isinstance(body, bytes):
        return body
    if hasattr(body, "read"):
        return body.read()
    return b"".join(body)


def _body_diff(recorded: bytes, made: bytes, recorded_name: str, made_name: str) -> list[str]:
    diff = list(difflib.unified_diff(request_lines(recorded, limit=None), request_lines(made, limit=None),
                                     recorded_name, made_name, n=2, lineterm=""))
    if not diff:
        return ["(the two requests read the same; they differ in bytes the summary does not show)"]
    shown = [line if len(line) <= _DIFF_WIDTH else line[:_DIFF_WIDTH] + " …" for line in diff[:_DIFF_LINES]]
    if len(diff) > _DIFF_LINES:
        shown.append(f"… {len(diff) - _DIFF_LINES} more diff lines")
    return shown
