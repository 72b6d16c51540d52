"""The cassette file: msgpack records in zstd frames, written as the run goes.

    file   = MAGIC  version:u16  chunk*
    chunk  = length:u32  zstd-frame           (big-endian; the length of the frame)
    frame  = msgpack list of records           (zstd content checksum on)
    record = Header | Interaction | End        (tagged by "kind")

A request body is stored either whole or as an edit of the previous
interaction's request body (bytes kept from its head and tail, new bytes
between): an agent re-sends its whole conversation each turn, so this keeps
both the file and the work of loading it proportional to what is new.

The first record is the header. Version 2 added the run settings to it (a
version 1 file has none, and still loads: replay then takes the settings from the
command line, as it always did). While recording, every interaction is its own
chunk, written with one `write` call as soon as the answer arrives, so a process
killed mid-run leaves a file that loads up to its last answer, and the process
that resumes the run appends chunks to it. `finalize` rewrites a file as a single
chunk, smaller again because zstd then sees every record at once.

Anything that does not decode (a short chunk, a bad checksum, a record out of
place) is a CassetteError: a cassette is never treated as empty and re-recorded.
"""

from __future__ import annotations

import datetime
import os
import struct
from pathlib import Path

import msgspec
import zstandard

from endstate.cassettes._limits import (
    MAX_BODY_BYTES,
    MAX_EXPANDED_BYTES,
    MAX_RECORDS,
    MAX_RESTORED_BYTES,
    expand,
    record_count,
    size_text,
    too_large,
)
from endstate.errors import CassetteError
from endstate.models import RunSettings

__all__ = [
    "FORMAT_VERSION",
    "Header",
    "RecordedRequest",
    "RecordedResponse",
    "Interaction",
    "End",
    "BodyDelta",
    "Recording",
    "CassetteWriter",
    "load",
    "write",
    "finalize",
    "utc_now",
    "cassette_file",
]

#: The version of the layout above, written into every new file.
FORMAT_VERSION = 2
#: The versions this endstate reads; a file of any other version is refused, not guessed at.
READABLE_VERSIONS: tuple[int, ...] = (1, 2)

MAGIC = b"\x89endstate-cassette\r\n\x1a"
_VERSION = struct.Struct(">H")
_LENGTH = struct.Struct(">I")
_PREFIX_SIZE = len(MAGIC) + _VERSION.size

# Chunks appended during a run favour speed; `finalize` spends more to shrink the file.
_APPEND_LEVEL = 3
_FINAL_LEVEL = 19


class Header(msgspec.Struct, tag_field="kind", tag="header", forbid_unknown_fields=True, omit_defaults=True):
    format_version: int
    endstate_version: str
    model: str
    task_id: str
    task_hash: str
    image_id: str
    #: ISO 8601 UTC; the only time value a cassette holds.
    created: str
    #: How every completion was requested (version 2 on); replay takes them from here.
    #: RunSettings refuses unknown fields, so a new setting is a new format version.
    settings: RunSettings | None = None
    #: The foreign agent whose traffic this is (its id, `name@hash`); empty for endstate's own
    #: loop, and then left out of the file, so such a header reads as it always did.
    agent: str = ""
    #: A fork: sha256 of the parent cassette's bytes, and the first agent turn answered live
    #: (turns before it were served from the parent). Left out of an ordinary recording.
    parent: str = ""
    fork_at: int | None = None
    #: Path in the task folder -> sha256 of the file, for each file the task hash covers, so a
    #: replay refused for a changed task names the file; absent from older recordings.
    task_files: dict[str, str] = {}


class RecordedRequest(msgspec.Struct, forbid_unknown_fields=True):
    method: str
    #: The URL path without scheme, host or port, so cassettes survive a new port.
    path: str
    body: bytes
    #: Only headers on an allowlist are kept, never credentials.
    headers: dict[str, list[str]]
    channel: str
    turn: int | None
    request_hash: str
    #: Query parameters with credential-like keys removed.
    query: list[tuple[str, str]] = []


class RecordedResponse(msgspec.Struct, forbid_unknown_fields=True):
    status: int
    headers: dict[str, list[str]]
    body: bytes
    reason: str = ""


class Interaction(msgspec.Struct, tag_field="kind", tag="interaction", forbid_unknown_fields=True):
    request: RecordedRequest
    response: RecordedResponse


class End(msgspec.Struct, tag_field="kind", tag="end", forbid_unknown_fields=True):
    """Written when the recording session closes in order; absent after a kill."""

    interactions: int
    #: The exception the recording session ended with, if any.
    error: str = ""


class BodyDelta(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """A request body as an edit of the previous request body: head + middle + tail."""

    head: int
    middle: bytes
    tail: int


# The stored forms differ from the in-memory ones only in the request body.
class _StoredRequest(RecordedRequest):
    body: bytes | BodyDelta


class _StoredInteraction(Interaction, tag="interaction"):
    request: _StoredRequest


_Stored = Header | _StoredInteraction | End

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list[_Stored])

# A body sharing less than this with the previous one is stored whole.
_MIN_SHARED = 256


def _shared_head(a: bytes, b: bytes) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search: each comparison is one memcmp in C
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _shared_tail(a: bytes, b: bytes, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle:] == b[len(b) - middle:]:
            low = middle
        else:
            high = middle - 1
    return low


def _store(interaction: Interaction, previous: bytes | None) -> _StoredInteraction:
    body: bytes | BodyDelta = interaction.request.body
    if previous:
        head = _shared_head(previous, body)
        tail = _shared_tail(previous, body, min(len(previous), len(body)) - head)
        if head + tail >= _MIN_SHARED:
            body = BodyDelta(head, body[head: len(body) - tail], tail)
    request = _StoredRequest(**{**msgspec.structs.asdict(interaction.request), "body": body})
    return _StoredInteraction(request, interaction.response)


def _restore(stored: _StoredInteraction, previous: bytes | None, path: Path, number: int) -> Interaction:
    request, body = stored.request, stored.request.body
    if isinstance(body, BodyDelta):
        if previous is None or body.head < 0 or body.tail < 0 or body.head + body.tail > len(previous):
            raise _damaged(path, f"record {number} edits a request body it does not follow")
        if body.head + len(body.middle) + body.tail > MAX_BODY_BYTES:
            raise too_large(path, f"record {number}'s request body would be "
                                  f"{size_text(body.head + len(body.middle) + body.tail)}")
        kept = memoryview(previous)
        body = b"".join((kept[: body.head], body.middle, kept[len(previous) - body.tail:]))
    if max(len(body), len(stored.response.body)) > MAX_BODY_BYTES:
        raise too_large(path, f"record {number} holds a body of {size_text(max(len(body), len(stored.response.body)))}")
    return Interaction(
        RecordedRequest(request.method, request.path, body, request.headers, request.channel, request.turn,
                        request.request_hash, request.query),
        stored.response,
    )


class Recording(msgspec.Struct):
    """A loaded cassette: its header, its interactions in recorded order, and the end marker."""

    path: str
    header: Header
    interactions: list[Interaction]
    end: End | None = None

    @property
    def complete(self) -> bool:
        return self.end is not None


#: What a cassette without its end marker is, as `cassette show` and replay's refusal say it.
INCOMPLETE = "incomplete: no end marker (the recording was cut short)"


def cassette_file(folder: str | os.PathLike[str], stem: str) -> Path:
    """The cassette of one attempt (`attempt_stem(task_id, attempt)`) in a cassette folder."""
    return Path(folder) / f"{stem}.cassette"


def cassettes_in(folder: str | os.PathLike[str]) -> list[Path]:
    """The cassettes a folder holds, by name."""
    return sorted(Path(folder).glob("*.cassette"))


def utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def load(path: str | os.PathLike[str]) -> Recording:
    """Read and check a whole cassette.

    Raises CassetteError when the file is missing, is not a cassette, has another
    format version, or is truncated or corrupt anywhere.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_EXPANDED_BYTES:  # compressed, it cannot hold more than it may expand to
            raise too_large(path, f"the file is {size_text(size)} long")
        data = path.read_bytes()
    except FileNotFoundError:
        raise CassetteError(f"no cassette at {path}") from None
    except IsADirectoryError:  # a --replay folder given where one recording is read
        inside = next((p.name for p in cassettes_in(path)), "TASK.cassette")
        raise CassetteError(f"{path} is a folder: give one cassette file in it, e.g. {path / inside}") from None
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from None
    return _parse(data, path)


def _parse(data: bytes, path: Path) -> Recording:
    _check_prefix(data, path)
    records: list[Header | _StoredInteraction | End] = []
    offset, expanded = _PREFIX_SIZE, 0
    while offset < len(data):
        if offset + _LENGTH.size > len(data):
            raise _damaged(path, f"it ends inside a chunk length at byte {offset}")
        (size,) = _LENGTH.unpack_from(data, offset)
        start, offset = offset + _LENGTH.size, offset + _LENGTH.size + size
        if offset > len(data):
            raise _damaged(path, f"a chunk at byte {start} needs {size} bytes, only {len(data) - start} remain")
        try:
            frame = expand(data[start:offset], MAX_EXPANDED_BYTES - expanded, path, start)
            expanded += len(frame)
            if record_count(frame) > MAX_RECORDS - len(records):
                raise too_large(path, f"the chunk at byte {start} says it holds {record_count(frame)} records, "
                                      f"over the {MAX_RECORDS} a cassette may hold")
            records += _decoder.decode(frame)
        except (zstandard.ZstdError, msgspec.DecodeError) as exc:
            raise _damaged(path, f"the chunk at byte {start} does not decode ({exc})") from None
        except RecursionError:  # unknown fields are refused first; this is the backstop
            raise _damaged(path, f"the chunk at byte {start} nests deeper than any record does") from None
    return _assemble(records, path, _VERSION.unpack_from(data, len(MAGIC))[0])


def _check_prefix(data: bytes, path: Path) -> None:
    if len(data) < _PREFIX_SIZE:
        if MAGIC.startswith(data[: len(MAGIC)]):
            raise _damaged(path, f"it is only {len(data)} bytes long")
        raise _foreign(path, data)
    if not data.startswith(MAGIC):
        raise _foreign(path, data)
    (version,) = _VERSION.unpack_from(data, len(MAGIC))
    if version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        raise CassetteError(
            f"cassette {path} has format version {version}, but this endstate reads versions "
            f"{readable}: re-record it with this endstate, or use the endstate that wrote it"
        )


def _assemble(records: list[Header | _StoredInteraction | End], path: Path, version: int) -> Recording:
    if not records or not isinstance(records[0], Header):
        raise _damaged(path, "it does not start with a header record")
    header = records[0]
    if header.format_version != version:
        raise _damaged(path, f"its header says format version {header.format_version}, its prefix {version}")
    interactions: list[Interaction] = []
    end: End | None = None
    restored = 0
    for number, record in enumerate(records[1:], start=1):
        if end is not None:
            raise _damaged(path, f"record {number} follows the end marker")
        if isinstance(record, Header):
            raise _damaged(path, f"record {number} is a second header")
        if isinstance(record, End):
            end = record
        else:
            previous = interactions[-1].request.body if interactions else None
            interactions.append(_restore(record, previous, path, number))
            restored += len(interactions[-1].request.body)
            if restored > MAX_RESTORED_BYTES:
                raise too_large(path, f"its request bodies restore to over {size_text(MAX_RESTORED_BYTES)} "
                                      f"by record {number}")
    if end is not None and end.interactions != len(interactions):
        raise _damaged(path, f"its end marker counts {end.interactions} interactions, "
                             f"the file holds {len(interactions)}")
    return Recording(str(path), header, interactions, end)


def _damaged(path: Path, why: str) -> CassetteError:
    return CassetteError(f"cassette {path} is truncated or corrupt ({why}): delete it and record it again")


def _foreign(path: Path, data: bytes) -> CassetteError:
    return CassetteError(
        f"{path} is not an endstate cassette (it starts with {data[:12]!r}, expected {MAGIC[:12]!r}): "
        "record it again with `endstate record`"
    )


def _chunk(records: list[Header | _StoredInteraction | End], level: int) -> bytes:
    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=True)
    frame = compressor.compress(_encoder.encode(records))
    return _LENGTH.pack(len(frame)) + frame


def _prefix(header: Header) -> bytes:
    return MAGIC + _VERSION.pack(header.format_version)


class CassetteWriter:
    """Appends records to a cassette file, each on disk before `append` returns.

    Open with `create` (a new file holding only the header) or `resume` (an
    existing file that has no end marker yet).
    """

    def __init__(self, path: Path, fd: int, previous: bytes | None = None) -> None:
        self.path = path
        self._fd: int | None = fd
        self._previous = previous
        self.written = 0

    @classmethod
    def create(cls, path: str | os.PathLike[str], header: Header, *, overwrite: bool = False) -> CassetteWriter:
        """Start a cassette; refuses an existing file unless `overwrite`."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if overwrite else os.O_EXCL)
        try:
            fd = os.open(path, flags, 0o644)
        except FileExistsError:
            raise CassetteError(
                f"cassette {path} already exists: pass --overwrite to record over it, or record elsewhere"
            ) from None
        writer = cls(path, fd)
        writer._write(_prefix(header) + _chunk([header], _APPEND_LEVEL))
        return writer

    @classmethod
    def resume(cls, path: str | os.PathLike[str]) -> tuple[CassetteWriter, Recording]:
        """Reopen a cassette whose recording was cut short, to append to it."""
        recording = load(path)
        if recording.complete:
            raise CassetteError(f"cassette {path} is already complete: it cannot be resumed")
        fd = os.open(Path(path), os.O_WRONLY | os.O_APPEND)
        previous = recording.interactions[-1].request.body if recording.interactions else None
        return cls(Path(path), fd, previous), recording

    def append(self, interaction: Interaction) -> None:
        self._write(_chunk([_store(interaction, self._previous)], _APPEND_LEVEL))
        self._previous = interaction.request.body
        self.written += 1

    def end(self, interactions: int, *, error: str = "") -> None:
        """Write the end marker; `interactions` counts the whole file, not this writer."""
        self._write(_chunk([End(interactions, error)], _APPEND_LEVEL))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            raise CassetteError(f"cassette {self.path} is closed")
        view = memoryview(data)
        while view:  # one call in practice: regular files take whole writes
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)


def write(path: str | os.PathLike[str], recording: Recording, *, level: int = _FINAL_LEVEL) -> None:
    """Write a whole recording as one chunk, atomically (temporary file, then rename)."""
    path = Path(path)
    records: list[Header | _StoredInteraction | End] = [recording.header]
    previous: bytes | None = None
    for interaction in recording.interactions:
        records.append(_store(interaction, previous))
        previous = interaction.request.body
    if recording.end is not None:
        records.append(recording.end)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as out:
            out.write(_prefix(recording.header) + _chunk(records, level))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def finalize(path: str | os.PathLike[str]) -> None:
    """Rewrite a cassette as one compact chunk; its records are unchanged."""
    write(path, load(path))
