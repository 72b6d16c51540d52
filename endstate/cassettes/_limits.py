"""How much a cassette may hold, and reading its frames without trusting them.

Cassettes come from other people (a pull request, a published benchmark), so a
file is refused as soon as it claims more than a real run can record, before
that much memory is spent on it. The ceilings follow from what an interaction is:

- one request body re-sends the conversation, and no model takes more than about
  2M tokens of context: ~8 MiB of text, at most twice that once JSON-escaped, so
  a body (request or response) is at most `MAX_BODY_BYTES` = 16 MiB;
- a cassette stores each request as an edit of the one before, so all its records
  together hold what was new in the run, a few bodies' worth: `MAX_EXPANDED_BYTES`
  = 4 bodies, the most its frames may decompress to, summed over the file;
- restored, every request carries its whole conversation again: a task's budget
  bounds that to about max_steps x context (40 steps x 60k tokens, ~10 MB, by
  default); `MAX_RESTORED_BYTES` leaves twenty times that;
- a run makes one request per step, so `MAX_RECORDS` (10,000) is far above any
  step budget.

Nesting needs no ceiling of its own: every stored field has a flat type and
unknown fields are refused, so a record nests no deeper than the schema does.
"""

from __future__ import annotations

from pathlib import Path

import zstandard

from endstate.errors import CassetteError

__all__ = ["MAX_BODY_BYTES", "MAX_EXPANDED_BYTES", "MAX_RESTORED_BYTES", "MAX_RECORDS", "expand", "record_count",
           "too_large"]

MiB = 1 << 20
MAX_BODY_BYTES = 16 * MiB
MAX_EXPANDED_BYTES = 4 * MAX_BODY_BYTES
MAX_RESTORED_BYTES = 200 * 1_000_000
MAX_RECORDS = 10_000

# Read a frame whose header does not declare its size in pieces of this many bytes.
_PIECE = MiB


def size_text(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.4g} {unit}"
    return f"{count} bytes"


def too_large(path: Path, what: str) -> CassetteError:
    return CassetteError(
        f"cassette {path} was refused unread: {what}. A real run records far less (a body is at most "
        f"{size_text(MAX_BODY_BYTES)}, a whole cassette expands to at most {size_text(MAX_EXPANDED_BYTES)}); "
        "check where this file came from"
    )


def expand(frame: bytes, allowance: int, path: Path, start: int) -> bytes:
    """Decompress one zstd frame, refusing it once it would pass `allowance` bytes.

    A frame that declares its size is refused on the declaration alone; one that does
    not is read in pieces, so at most `allowance` bytes are ever held. Raises
    zstandard.ZstdError for a frame that does not decode."""
    declared = zstandard.frame_content_size(frame)
    if declared > allowance:
        raise too_large(path, f"the chunk at byte {start} expands to {size_text(declared)}, "
                              f"over the {size_text(allowance)} left of its ceiling")
    if declared >= 0:
        return zstandard.ZstdDecompressor().decompress(frame)
    pieces, held = [], 0
    with zstandard.ZstdDecompressor().stream_reader(frame) as reader:
        while piece := reader.read(_PIECE):
            held += len(piece)
            if held > allowance:
                raise too_large(path, f"the chunk at byte {start} expands past the "
                                      f"{size_text(allowance)} left of its ceiling")
            pieces.append(piece)
    return b"".join(pieces)


def record_count(expanded: bytes) -> int:
    """How many records a frame's msgpack list says it holds, read from its header
    (before any is decoded); -1 when it does not start with a list."""
    if not expanded:
        return -1
    first = expanded[0]
    if 0x90 <= first <= 0x9F:
        return first & 0x0F
    if first == 0xDC and len(expanded) >= 3:
        return int.from_bytes(expanded[1:3], "big")
    if first == 0xDD and len(expanded) >= 5:
        return int.from_bytes(expanded[1:5], "big")
    return -1
