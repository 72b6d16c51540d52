"""Recording and replaying one task's model traffic through vcrpy.

    with open_session(job, task_id="fix-add", state_dir=work) as tape:
        ...the agent talks to its model...
    tape.divergence, tape.unplayed()

Record: vcrpy in record mode "all"; every exchange is scrubbed and appended to the
cassette the moment its answer arrives (vcrpy itself would write only on exit).
Replay: the whole cassette is loaded and checked before vcrpy starts; record mode
"none", so nothing reaches the network; a request with no recorded answer raises
ReplayDivergence from inside the HTTP transport, after writing it on the tape.
Fork (record with a parent, see `_fork`): vcrpy in record mode "new_episodes" over
the parent's prefix; answers served and answers fetched are both written as they come.

A checkpoint task's agent is killed and resumed by a new process with the same
job. The session keeps a small journal in `state_dir` (which must be the task's
own work folder for this run): it tells the new process to append to the
recording instead of refusing the existing file, or which recorded answers the
killed process already played, so they are not served twice.

Only httpx2 (the transport of the openai and anthropic SDKs) is patched: the
Docker SDK's own HTTP traffic must reach the engine during replay.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import vcr
import vcr.patch
from vcr import VCR
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.record_mode import RecordMode
from vcr.request import Request

from endstate import __version__
from endstate.cassettes._divergence import explain_divergence, request_body
from endstate.cassettes._fork import ForkPlan, hook_fork
from endstate.cassettes._format import FORMAT_VERSION, CassetteWriter, Header, Recording, finalize, load, utc_now, write
from endstate.cassettes._job import BUFFERED_STREAM_HEADER, CassetteJob, Provenance, ProvenanceMode, RunMode
from endstate.cassettes._journal import SIDECAR_NAME, Sidecar, header_id
from endstate.cassettes._match import MatchMode, RequestKeys, canonical_body, check_match_mode
from endstate.cassettes._preflight import check_header, open_cassette
from endstate.cassettes._scrub import SECRET_HEADERS, SECRET_QUERY_KEYS, scrub_request, to_interaction, to_vcr
from endstate.cassettes._toolresult import tool_result
from endstate.errors import CassetteError, ReplayDivergence
from endstate.models import RunSettings, Scrubber

__all__ = ["Tape", "open_session", "VCRPY_VERSION", "SIDECAR_NAME"]

#: The vcrpy release the persister and hooks are written against (pinned in pyproject).
VCRPY_VERSION = "9.4.2"

#: Channels whose recorded answers must all be played for a replay to be complete.
PLAYED_CHANNELS = ("agent", "compaction")

_PATCH_ONLY_HTTPX2 = tuple(name for name in vcr.patch.PATCHER_NAMES if name != "httpx2")


class Tape:
    """What one session did: written by the session, read by the worker afterwards."""

    def __init__(self, *, mode: str, match: MatchMode, path: Path, task_id: str, header: Header,
                 channels: list[str], played: set[int], notes: list[str], recording: Recording | None = None) -> None:
        self.mode = mode
        self.match = match
        self.path = path
        self.task_id = task_id
        #: The cassette's header (for a new recording, the one written).
        self.header = header
        #: Things worth telling the user that did not stop the run (task changed, image differs...).
        self.notes = notes
        #: Set by the first request replay could not answer; None when replay kept up.
        self.divergence: str | None = None
        self.divergence_error: ReplayDivergence | None = None
        #: Interactions this process appended (record mode).
        self.recorded = 0
        #: A fork: agent answers served from the parent, and whether it has gone live.
        self.replayed_turns = 0
        self.live = False
        self.fork: ForkPlan | None = None
        self._channels = channels
        self._played = played
        self._recording = recording

    def recorded_tool_result(self, turn: int, call_id: str) -> str | None:
        """In replay, what the recorded run's tool call `call_id` returned, as agent turn `turn`'s
        request carried it (None when recording, or when the recording does not say)."""
        if self._recording is None:
            return None
        if self.fork is not None and self.fork.live_from is not None and turn > self.fork.live_from:
            return None  # a call the live continuation made: the parent never ran it
        return tool_result(self._recording, turn=turn, call_id=call_id)

    def provenance(self) -> Provenance:
        """Where this task's answers came from (replay: every one from the cassette)."""
        if self.fork is not None and self.fork.unchanged(self.played):
            return Provenance(ProvenanceMode.REPLAYED, replayed_turns=self.replayed_turns)
        if self.fork is not None:
            return Provenance(ProvenanceMode.FORKED, replayed_turns=self.replayed_turns, live_from=self.fork.live_from,
                              parent=self.fork.parent_hash)
        if self.mode == RunMode.REPLAY:
            return Provenance(ProvenanceMode.REPLAYED, replayed_turns=sum(
                1 for index in self._played if self._channels[index] == "agent"))
        return Provenance(ProvenanceMode.LIVE)

    @property
    def played(self) -> int:
        """Recorded interactions served so far, by this process and any it resumed."""
        return len(self._played)

    def unplayed(self) -> int:
        """Recorded agent and compaction interactions that no process of this run was served."""
        return sum(1 for index, channel in enumerate(self._channels)
                   if channel in PLAYED_CHANNELS and index not in self._played)


@contextlib.contextmanager
def open_session(job: CassetteJob, *, task_id: str, state_dir: str | Path,
                 resumed: bool | None = None, scrubber: Scrubber | None = None) -> Iterator[Tape]:
    """Record or replay the model traffic of one task's agent while the block runs.

    `state_dir` holds the session journal. `resumed` says whether this process
    continues a killed one; None infers it from the journal (a session that was
    opened and never closed). `scrubber` replaces the run's secret values in
    everything recorded, and in what replay hashes. Raises CassetteError before anything runs when the
    cassette is missing, corrupt, for another task or model, or would be
    overwritten; ReplayDivergence (from the model call) when replay has no answer.
    """
    if job.mode not in (RunMode.RECORD, RunMode.REPLAY):
        raise CassetteError(f"unknown cassette mode {job.mode!r}: use record or replay")
    match = check_match_mode(job.match)
    _check_vcrpy()
    path = Path(job.path)
    sidecar = Sidecar(Path(state_dir) / SIDECAR_NAME)
    session = (_fork if job.parent else _record) if job.mode == RunMode.RECORD else _replay
    keys = RequestKeys(scrubber)
    with session(job, path, task_id, match, sidecar, resumed, keys) as tape:
        yield tape


def _check_vcrpy() -> None:
    if vcr.__version__ != VCRPY_VERSION:
        raise CassetteError(
            f"endstate's cassettes need vcrpy {VCRPY_VERSION}, found {vcr.__version__}: "
            "reinstall endstate's dependencies"
        )
    import httpx2

    if httpx2.HTTPTransport.handle_request is not getattr(vcr.patch, "_Httpx2HttpTransport_handle_request", None):
        raise CassetteError(
            "another cassette is already open in this process: vcrpy patches HTTP process-wide, "
            "so each task's agent needs a process of its own"
        )


# -- record ---------------------------------------------------------------------------


@contextlib.contextmanager
def _record(job: CassetteJob, path: Path, task_id: str, match: MatchMode, sidecar: Sidecar,
            resumed: bool | None, keys: RequestKeys) -> Iterator[Tape]:
    journal = sidecar.read()
    if resumed is None:
        resumed = journal.is_open(path, "record")
    if resumed:
        writer, recording = CassetteWriter.resume(path)
        try:
            check_header(recording, job.header, task_id, strict=True, verb="resume recording")
        except CassetteError:
            writer.close()
            raise
        header, count = recording.header, len(recording.interactions)
        if not journal.is_open(path, "record", header_id(header)):
            sidecar.start(path, "record", header_id(header))
    else:
        header = _new_header(job, task_id)
        writer = CassetteWriter.create(path, header, overwrite=job.overwrite)
        count = 0
        sidecar.start(path, "record", header_id(header))

    tape = Tape(mode=RunMode.RECORD, match=match, path=path, task_id=task_id, header=header, channels=[], played=set(),
                notes=[])
    error: str | None = ""
    try:
        with _use_cassette(path, RecordMode.ALL, match, keys, _Persister(None, writer)) as cassette:
            _hook_recording(cassette, writer, tape, keys)
            yield tape
    except BaseException as exc:
        error = _ended_by(exc)
        raise
    finally:
        if _close(writer, sidecar, count, error):
            finalize(path)


def _ended_by(exc: BaseException) -> str | None:
    """The error the end marker names for `exc`; None for an interrupt (Ctrl-C, SIGTERM, an exit)."""
    return type(exc).__name__ if isinstance(exc, Exception) else None


def _close(writer: CassetteWriter, sidecar: Sidecar, count: int, error: str | None) -> bool:
    """End a recording session; return whether it closed in order (end marker, journal closed).
    An interrupt (`error` None) cuts the recording short as a kill would: the cassette keeps what
    it holds but gets no end marker (replay refuses it, `cassette show` calls it incomplete, `record
    --resume` records it again) and its journal stays open (a resumed worker appends)."""
    if error is None:
        writer.close()
        return False
    try:
        writer.end(count + writer.written, error=error)
    finally:
        writer.close()
        sidecar.close()
    return True


def _new_header(job: CassetteJob, task_id: str) -> Header:
    expected = job.header
    return Header(
        format_version=FORMAT_VERSION,
        endstate_version=str(expected.get("endstate_version") or __version__),
        model=str(expected.get("model", "")),
        task_id=task_id,
        task_hash=str(expected.get("task_hash", "")),
        image_id=str(expected.get("image_id", "")),
        created=utc_now(),
        settings=msgspec.convert(expected["settings"], RunSettings) if expected.get("settings") else None,
        agent=str(expected.get("agent") or ""),
        task_files=dict(expected.get("task_files") or {}),
    )


def _hook_recording(cassette: Any, writer: CassetteWriter, tape: Tape, keys: RequestKeys) -> None:
    """Make vcrpy's cassette write each exchange through `writer`, and refuse what it cannot record."""
    can_play, append = cassette.can_play_response_for, cassette.append

    def checked_can_play(request: Request) -> bool:
        _refuse_unrecordable(cassette, request)  # before the request goes out, so a refusal keeps it off the network
        return can_play(request)

    def appending(request: Request, response: dict[str, Any]) -> None:
        before = len(cassette.data)
        append(request, response)
        if len(cassette.data) != before + 1:
            raise CassetteError(f"vcrpy dropped the exchange {request.method} {request.path} instead of recording it")
        writer.append(to_interaction(*cassette.data[-1], keys, keys.scrubber))
        tape.recorded += 1

    cassette.can_play_response_for = checked_can_play
    cassette.append = appending


def _refuse_unrecordable(cassette: Any, request: Request) -> None:
    kept = cassette.filter_request(request)
    if kept is None:
        raise CassetteError(f"the request {request.method} {request.path} would be sent without being recorded")
    body = canonical_body(request_body(kept))
    if isinstance(body, dict) and body.get("stream") and not request.headers.get(BUFFERED_STREAM_HEADER):
        raise CassetteError("streaming requests cannot be recorded (vcrpy buffers answers): use stream=False")


# -- fork -----------------------------------------------------------------------------


@contextlib.contextmanager
def _fork(job: CassetteJob, path: Path, task_id: str, match: MatchMode, sidecar: Sidecar,
          resumed: bool | None, keys: RequestKeys) -> Iterator[Tape]:
    """Record a new cassette whose first turns come from `job.parent` (see `_fork`)."""
    journal = sidecar.read()
    if resumed is None:
        resumed = journal.is_open(path, "fork")
    resumed = resumed and journal.is_open(path, "fork")
    plan = ForkPlan.open(job, task_id, sidecar.path.parent, resumed=resumed)
    if resumed:
        writer, recording = CassetteWriter.resume(path)
        header, count = recording.header, len(recording.interactions)
    else:
        header = msgspec.structs.replace(_new_header(job, task_id), parent=plan.parent_hash,
                                         fork_at=plan.header_fork_at())
        writer = CassetteWriter.create(path, header, overwrite=job.overwrite)
        count = 0
        sidecar.start(path, "fork", header_id(header))
    tape = Tape(mode=RunMode.RECORD, match=match, path=path, task_id=task_id, header=header,
                channels=[i.request.channel for i in plan.prefix.interactions], played=set(), notes=plan.notes,
                recording=plan.parent)
    tape.fork = plan
    if resumed:
        tape._played.update(i for i in journal.played if 0 <= i < len(plan.prefix.interactions))
        tape.replayed_turns = sum(1 for i in tape._played if tape._channels[i] == "agent")
        plan.live_from, tape.live = journal.live, journal.live is not None
    error: str | None = ""
    try:
        with _use_cassette(path, RecordMode.NEW_EPISODES, plan.match, keys,
                           _Persister(plan.prefix if plan.prefix.interactions else None, None)) as cassette:
            for index in tape._played:
                cassette.play_counts[index] = 1
            hook_fork(cassette, plan, writer, tape, keys, sidecar, lambda r: _refuse_unrecordable(cassette, r))
            yield tape
    except BaseException as exc:
        error = _ended_by(exc)
        raise
    finally:
        if _close(writer, sidecar, count, error):
            if plan.unchanged(tape.played) and plan.copy is not None:  # matched to the end: it stays
                shutil.copyfile(plan.copy, path)
            else:
                final = load(path)
                write(path, msgspec.structs.replace(final, header=msgspec.structs.replace(
                    final.header, fork_at=plan.header_fork_at())))


# -- replay ---------------------------------------------------------------------------


@contextlib.contextmanager
def _replay(job: CassetteJob, path: Path, task_id: str, match: MatchMode, sidecar: Sidecar,
            resumed: bool | None, keys: RequestKeys) -> Iterator[Tape]:
    recording = open_cassette(path, task_id, job.header.get("model"))
    notes = check_header(recording, job.header, task_id, strict=match == "strict", verb="replay")
    identity = header_id(recording.header)
    journal = sidecar.read()
    if resumed is None:
        resumed = journal.is_open(path, "replay", identity)
    played: set[int] = set()
    if resumed and journal.is_open(path, "replay", identity):
        played = {i for i in journal.played if 0 <= i < len(recording.interactions)}
    else:
        if resumed:
            notes.append("resumed, but the session journal is for another cassette: nothing counts as played yet")
        sidecar.start(path, "replay", identity)

    tape = Tape(mode=RunMode.REPLAY, match=match, path=path, task_id=task_id, header=recording.header,
                channels=[i.request.channel for i in recording.interactions], played=played, notes=notes,
                recording=recording)
    try:
        with _use_cassette(path, RecordMode.NONE, match, keys, _Persister(recording, None)) as cassette:
            if len(cassette.data) != len(recording.interactions):
                raise CassetteError(f"vcrpy loaded {len(cassette.data)} of the {len(recording.interactions)} "
                                    f"interactions in {path}")
            for index in played:
                cassette.play_counts[index] = 1
            _hook_replay(cassette, recording, tape, keys, sidecar)
            yield tape
    finally:
        sidecar.close()


def _hook_replay(cassette: Any, recording: Recording, tape: Tape, keys: RequestKeys, sidecar: Sidecar) -> None:
    """Journal every answer served, and turn a request with no answer into a ReplayDivergence."""
    can_play, play = cassette.can_play_response_for, cassette.play_response

    def checked_can_play(request: Request) -> bool:
        if can_play(request):
            return True
        error = explain_divergence(request, recording, set(cassette.play_counts), keys, match=tape.match,
                                   task_id=tape.task_id)
        if tape.divergence is None:  # the SDK may retry; the first miss is the one to report
            tape.divergence, tape.divergence_error = str(error), error
        raise error

    def playing(request: Request) -> dict[str, Any]:
        before = set(cassette.play_counts)
        response = play(request)
        for index in set(cassette.play_counts) - before:
            sidecar.played(index)
            tape._played.add(index)
        return response

    cassette.can_play_response_for = checked_can_play
    cassette.play_response = playing


# -- vcrpy wiring ---------------------------------------------------------------------


def _use_cassette(path: Path, record_mode: RecordMode, match: MatchMode, keys: RequestKeys,
                  persister: _Persister) -> Any:
    """vcrpy's context manager for this session, with its registries on a VCR of its own."""
    name, matcher = keys.matcher_for(match)
    recorder = VCR(
        record_mode=record_mode,
        match_on=(name,),
        filter_headers=SECRET_HEADERS,
        filter_query_parameters=SECRET_QUERY_KEYS,
        before_record_request=scrub_request,
        decode_compressed_response=True,
        skip_patchers=_PATCH_ONLY_HTTPX2,
        record_on_exception=True,
    )
    recorder.register_matcher(name, matcher)
    recorder.register_persister(persister)
    return recorder.use_cassette(str(path), allow_playback_repeats=False)


class _Persister:
    """vcrpy's persister for one session.

    Replay hands vcrpy the recording already loaded and checked. Record hands it
    nothing (record mode "all" would not play it anyway), and saving writes
    nothing: every interaction reached the file when it happened.
    """

    def __init__(self, recording: Recording | None, writer: CassetteWriter | None) -> None:
        self._recording = recording
        self._writer = writer

    def load_cassette(self, cassette_path: str, serializer: object) -> tuple[list[Request], list[dict[str, Any]]]:
        if self._recording is None:
            raise CassetteNotFoundError(cassette_path)
        return to_vcr(self._recording.interactions)

    def save_cassette(self, cassette_path: str, cassette_dict: dict[str, Any], serializer: object) -> None:
        if self._writer is not None and len(cassette_dict["requests"]) != self._writer.written:
            raise CassetteError(
                f"cassette {cassette_path}: vcrpy holds {len(cassette_dict['requests'])} exchanges, "
                f"{self._writer.written} were written"
            )
