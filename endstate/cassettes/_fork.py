"""A fork: a recording whose first turns are served from a parent cassette, the rest live.

    plan = ForkPlan.open(job, task_id, state_dir)    the parent loaded, its prefix chosen
    hook_fork(cassette, plan, writer, tape, keys, sidecar)

The prefix is every parent interaction before its first agent request of turn
`fork_at` (all of them when the fork goes live at the first divergence). A
prefix request matches on its conversation, the body without its "model", so
another model can continue what one recorded. Before `fork_at` a request the
prefix has no answer for is a ReplayDivergence; from the first request that goes
live every request goes live. Both kinds are written to the new cassette as they
are answered, so it replays strictly as the fork ran.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import msgspec

from endstate.cassettes._divergence import explain_divergence
from endstate.cassettes._format import CassetteWriter, Recording, load
from endstate.cassettes._job import FIRST_DIVERGENCE, LAST_TURN, CassetteJob
from endstate.cassettes._journal import Sidecar
from endstate.cassettes._match import RequestKeys
from endstate.cassettes._preflight import check_header, open_cassette
from endstate.cassettes._scrub import to_interaction
from endstate.errors import CassetteError, ReplayDivergence

__all__ = ["ForkPlan", "hook_fork", "PARENT_COPY"]

#: The parent as the fork first read it, kept in the task's work folder: a fork that replaces
#: its parent (new_episodes) must still read the parent when a killed agent resumes.
PARENT_COPY = "fork-parent.cassette"


class ForkPlan:
    """What a fork serves from its parent, and how far it has got."""

    def __init__(self, parent: Recording, parent_hash: str, fork_at: int, prefix: Recording, notes: list[str]) -> None:
        self.parent = parent
        self.parent_hash = parent_hash
        #: The first agent turn to answer live; FIRST_DIVERGENCE: the first the prefix cannot answer.
        self.fork_at = fork_at
        self.prefix = prefix
        self.notes = notes
        #: How the prefix is matched: by conversation, or by turn across wire formats (`_crosswire`).
        self.match = "conversation"
        #: The agent turn of the first request answered live (None while none was).
        self.live_from: int | None = None
        #: The parent's bytes as the fork first read them.
        self.copy: Path | None = None

    @classmethod
    def open(cls, job: CassetteJob, task_id: str, state_dir: Path, *, resumed: bool) -> ForkPlan:
        copy = state_dir / PARENT_COPY
        if not resumed or not copy.exists():
            source = Path(job.parent)
            open_cassette(source, task_id)  # says precisely why a missing or damaged parent cannot be read
            state_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
        data = copy.read_bytes()
        parent = load(copy)
        parent = msgspec.structs.replace(parent, path=job.parent)
        # The continuation may be another model or a changed task: only the task and agent must agree.
        notes = check_header(parent, {"agent": job.header.get("agent", "")}, task_id, strict=False, verb="fork")
        turns = sorted({i.request.turn for i in parent.interactions
                        if i.request.channel == "agent" and i.request.turn is not None})
        fork_at = max(len(turns) - 1, 0) if job.fork_at == LAST_TURN else job.fork_at
        if fork_at == FIRST_DIVERGENCE:
            kept = parent.interactions
        else:
            if fork_at < 0 or fork_at > len(turns):
                raise CassetteError(f"cannot fork task {task_id} at turn {fork_at}: its cassette {job.parent} "
                                    f"has {len(turns)} agent turns (0..{len(turns) - 1}); pass --fork-at 0.."
                                    f"{len(turns)}")
            first = next((n for n, i in enumerate(parent.interactions) if i.request.channel == "agent"
                          and i.request.turn is not None and i.request.turn >= fork_at), len(parent.interactions))
            kept = parent.interactions[:first]
        prefix = msgspec.structs.replace(parent, interactions=list(kept))
        crossing = _crossing(parent.header.model, str(job.header.get("model") or ""), job.header.get("agent", ""))
        if crossing:
            prefix, dropped = _translated(prefix, *crossing)
            notes.append(f"forked across wire formats: the parent's answers ({crossing[0]}) are served as "
                         f"{crossing[1]}, matched by agent turn and by the prompt and tool outputs"
                         + (f"; {dropped} thinking or reasoning part(s) dropped, {crossing[1]} having no place "
                            "for another provider's" if dropped else ""))
        plan = cls(parent, hashlib.sha256(data).hexdigest(), fork_at, prefix, notes)
        plan.match = "turn" if crossing else "conversation"
        plan.copy = copy
        return plan

    def header_fork_at(self) -> int | None:
        """What the new cassette's header says: the fork turn asked for, or where it went live."""
        return self.live_from if self.fork_at == FIRST_DIVERGENCE else self.fork_at

    def unchanged(self, played: int) -> bool:
        """A fork at the first divergence that met none: every parent answer played, nothing live."""
        return (self.fork_at == FIRST_DIVERGENCE and self.live_from is None
                and played == len(self.parent.interactions))

    def must_match(self, turn: int | None) -> bool:
        """Whether a request of this agent turn must be answered from the prefix."""
        return self.fork_at != FIRST_DIVERGENCE and turn is not None and turn < self.fork_at


def _crossing(parent: str, model: str, agent: str) -> tuple[str, str, str] | None:
    """(parent's wire, new wire, new model name) when endstate's loop forks onto another wire format."""
    from endstate.errors import ModelSpecError
    from endstate.models import WIRE_FORMATS, parse_spec

    try:
        (source, _), (target, name) = parse_spec(parent), parse_spec(model)
    except ModelSpecError:
        return None
    if agent or WIRE_FORMATS[source] == WIRE_FORMATS[target]:  # an installed agent speaks one format
        return None
    return WIRE_FORMATS[source], WIRE_FORMATS[target], name


def _translated(prefix: Recording, source: str, target: str, model: str) -> tuple[Recording, int]:
    """The prefix with every answered request's answer written in the target format."""
    from endstate.cassettes._crosswire import translate_answer
    from endstate.cassettes._format import RecordedResponse

    kept, dropped = [], 0
    for interaction in prefix.interactions:
        answer = interaction.response
        if 200 <= answer.status < 300:
            body, lost = translate_answer(answer.body, source, target, model)
            dropped += lost
            answer = RecordedResponse(answer.status, {"content-type": ["application/json"]}, body, answer.reason)
        kept.append(msgspec.structs.replace(interaction, response=answer))
    return msgspec.structs.replace(prefix, interactions=kept), dropped


def hook_fork(cassette: Any, plan: ForkPlan, writer: CassetteWriter, tape: Any, keys: RequestKeys,
              sidecar: Sidecar, refuse: Any) -> None:
    """Serve the prefix, then let every request go live; write both to `writer` as answered.
    `refuse(request)` raises for a request that cannot be recorded (it runs before any is sent)."""
    can_play, play, append = cassette.can_play_response_for, cassette.play_response, cassette.append

    def checked_can_play(request: Any) -> bool:
        refuse(request)
        if plan.live_from is not None or tape.live:
            return False
        if can_play(request):
            return True
        turn = keys.turn_of(request)
        if plan.must_match(turn):
            raise _diverged(request, plan, set(cassette.play_counts), keys, tape, turn)
        tape.live = True
        plan.live_from = turn if turn is not None else tape.replayed_turns
        sidecar.live(plan.live_from)
        return False

    def playing(request: Any) -> Any:
        before = set(cassette.play_counts)
        response = play(request)
        for index in sorted(set(cassette.play_counts) - before):
            sidecar.played(index)
            tape._played.add(index)
        writer.append(to_interaction(cassette.filter_request(request), response, keys, keys.scrubber))
        tape.recorded += 1
        if keys.channel_of(request) == "agent":
            tape.replayed_turns += 1
        return response

    def appending(request: Any, response: dict[str, Any]) -> None:
        before = len(cassette.data)
        append(request, response)
        if len(cassette.data) != before + 1:
            raise CassetteError(f"vcrpy dropped the exchange {request.method} {request.path} instead of recording it")
        writer.append(to_interaction(*cassette.data[-1], keys, keys.scrubber))
        tape.recorded += 1

    cassette.can_play_response_for = checked_can_play
    cassette.play_response = playing
    cassette.append = appending


def _diverged(request: Any, plan: ForkPlan, played: set[int], keys: RequestKeys, tape: Any,
              turn: int | None) -> ReplayDivergence:
    explained = explain_divergence(request, plan.prefix, played, keys, match="strict", task_id=tape.task_id)
    detail = str(explained).splitlines()[1:-1]  # the closest recorded request and the diff
    error = ReplayDivergence("\n".join([
        f"fork of task {tape.task_id} diverged at agent turn {turn}, before --fork-at {plan.fork_at}: its parent "
        f"{plan.parent.path} has no answer for this request; fork at turn {turn} or earlier, or re-record it",
        *detail]), task=tape.task_id, turn=turn, request_hash=explained.request_hash, closest=explained.closest)
    if tape.divergence is None:  # the SDK may retry; the first miss is the one to report
        tape.divergence, tape.divergence_error = str(error), error
    return error
