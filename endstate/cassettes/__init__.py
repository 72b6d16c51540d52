"""Recorded model traffic: the cassette file, request matching, sessions, show and diff.

    open_session(job, task_id=..., state_dir=...)  record or replay one task's agent -> Tape
    show(path) -> str                               a cassette as readable text
    diff(a, b) -> (identical, text)                 the first interaction two recordings differ at
    first_difference(left, right, same)             the first key two keyed sequences differ at
    load(path) -> Recording                         the checked contents of a cassette file
    finalize(path)                                  rewrite a cassette as one compact frame
    request_hash(method, path, body) -> str         what strict replay matches on
    check_replay_folder(folder, tasks, ...)         every cassette of a replay checked up front

Every failure to read a cassette is a CassetteError; replay meeting a request it
has no answer for is a ReplayDivergence (both in endstate.errors).

vcrpy loads with the session (`open_session`, `Tape`), on first use: reading, showing
and diffing cassettes, and the job type an agent process is handed, do without it.
"""

from typing import TYPE_CHECKING, Any

from endstate.cassettes._diff import Difference, diff, first_difference, show
from endstate.cassettes._format import (
    FORMAT_VERSION,
    End,
    Header,
    Interaction,
    RecordedRequest,
    RecordedResponse,
    Recording,
    cassette_file,
    cassettes_in,
    finalize,
    load,
)
from endstate.cassettes._job import (
    BUFFERED_STREAM_HEADER,
    FIRST_DIVERGENCE,
    LAST_TURN,
    CassetteJob,
    Provenance,
    ProvenanceMode,
    RunMode,
)
from endstate.cassettes._match import MATCH_MODES, request_hash
from endstate.cassettes._preflight import ReplaySource, check_replay_folder, replay_settings

if TYPE_CHECKING:
    from endstate.cassettes._session import Tape, open_session

__all__ = [
    "open_session",
    "CassetteJob",
    "Provenance",
    "ProvenanceMode",
    "RunMode",
    "FIRST_DIVERGENCE",
    "LAST_TURN",
    "Tape",
    "BUFFERED_STREAM_HEADER",
    "show",
    "diff",
    "first_difference",
    "Difference",
    "load",
    "cassette_file",
    "cassettes_in",
    "finalize",
    "request_hash",
    "check_replay_folder",
    "replay_settings",
    "ReplaySource",
    "MATCH_MODES",
    "FORMAT_VERSION",
    "Recording",
    "Header",
    "Interaction",
    "RecordedRequest",
    "RecordedResponse",
    "End",
]


def __getattr__(name: str) -> Any:
    if name not in ("open_session", "Tape"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from endstate.cassettes import _session

    value = getattr(_session, name)
    globals()[name] = value
    return value
