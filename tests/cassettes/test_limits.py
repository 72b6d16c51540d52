"""Untrusted cassettes are refused before they cost what they claim: a frame that
expands past the ceiling, too many records, bodies too large restored, deep nesting."""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap

import msgspec
import pytest
import zstandard
from cassette_helpers import header

from endstate.cassettes import FORMAT_VERSION, Interaction, RecordedRequest, RecordedResponse, load
from endstate.cassettes._format import MAGIC, BodyDelta, CassetteWriter, _chunk, _StoredInteraction
from endstate.cassettes._limits import MAX_RECORDS, MAX_RESTORED_BYTES, expand
from endstate.errors import CassetteError

HEADER = header()
GiB = 1 << 30
_BLOCK = 128 << 10


def bomb_frame(size: int, *, declared: bool) -> bytes:
    """A zstd frame of `size` zero bytes made of RLE blocks (4 bytes per 128 KiB), with or
    without its size in the frame header: built by hand, so a 16 GiB one costs nothing to make."""
    window = bytes([(17 - 10) << 3])  # 2**17 = 128 KiB, the largest block
    header = b"\x28\xb5\x2f\xfd" + (b"\xc0" + window + struct.pack("<Q", size) if declared else b"\x00" + window)
    blocks = bytearray()
    for left in range(size, 0, -_BLOCK):
        length = min(left, _BLOCK)
        blocks += ((length << 3) | (1 << 1) | (left <= _BLOCK)).to_bytes(3, "little") + b"\x00"
    return header + bytes(blocks)


def cassette_with(tmp_path, *frames: bytes):
    path = tmp_path / "bomb.cassette"
    prefix = MAGIC + struct.pack(">H", FORMAT_VERSION) + _chunk([HEADER], 3)
    path.write_bytes(prefix + b"".join(struct.pack(">I", len(f)) + f for f in frames))
    return path


def test_a_hand_built_frame_is_a_real_zstd_frame():
    frame = bomb_frame(3 * _BLOCK + 5, declared=False)
    assert zstandard.ZstdDecompressor().decompressobj().decompress(frame) == bytes(3 * _BLOCK + 5)


@pytest.mark.alone  # a peak-RSS bound: measured with nothing else running
@pytest.mark.parametrize("declared", [True, False])
def test_a_cassette_expanding_to_16_gib_is_refused_under_300_mb(tmp_path, declared):
    path = cassette_with(tmp_path, bomb_frame(16 * GiB, declared=declared))
    assert path.stat().st_size < 1 << 20
    # The peak of this process's own memory (VmHWM): ru_maxrss would also hold the peak of the process it
    # was started from (Linux folds the old memory's peak into it at exec), here a pytest grown by earlier tests.
    probe = textwrap.dedent(f"""
        import sys
        from endstate.cli import main
        sys.argv = ["endstate", "cassette", "show", {str(path)!r}]
        try:
            main()
        except SystemExit as exit:
            code = exit.code
        peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
        print(code, peak // 1024, file=sys.stderr)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    *message, last = done.stderr.strip().splitlines()
    code, peak_mb = map(int, last.split())
    assert code == 2 and "Traceback" not in done.stderr
    text = " ".join(message)
    assert f"{path}" in text and "refused unread" in text and "64 MiB" in text
    assert ("16 GiB" in text) == declared
    assert peak_mb < 300, f"peak RSS {peak_mb} MB"


def test_the_ceiling_is_summed_over_the_file(tmp_path):
    first = zstandard.ZstdCompressor().compress(msgspec.msgpack.encode([big_interaction(15 << 20)]))
    with pytest.raises(CassetteError, match="the chunk at byte \\d+ expands to 50 MiB, over the 49 MiB left"):
        load(cassette_with(tmp_path, first, bomb_frame(50 << 20, declared=True)))


def big_interaction(size: int) -> Interaction:
    return Interaction(RecordedRequest("POST", "/v1/chat/completions", bytes(size), {}, "agent", 1, "0" * 64),
                       RecordedResponse(200, {}, b"{}"))


def test_a_frame_within_the_ceiling_still_decodes_without_a_declared_size():
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(msgspec.msgpack.encode([1, 2]))
    assert msgspec.msgpack.decode(expand(frame, 100, None, 0)) == [1, 2]


def test_a_frame_claiming_too_many_records_is_refused_before_decoding(tmp_path):
    frame = zstandard.ZstdCompressor().compress(b"\xdd\xff\xff\xff\xff")
    with pytest.raises(CassetteError, match=f"4294967295 records, over the {MAX_RECORDS}"):
        load(cassette_with(tmp_path, frame))


def test_deep_nesting_is_refused_as_damage_not_a_crash(tmp_path):
    raw = msgspec.msgpack.encode([{**msgspec.to_builtins(HEADER), "x": None}])
    frame = zstandard.ZstdCompressor().compress(raw[:-1] + b"\x91" * 200_000 + b"\xc0")
    path = tmp_path / "deep.cassette"
    path.write_bytes(MAGIC + struct.pack(">H", FORMAT_VERSION) + struct.pack(">I", len(frame)) + frame)
    with pytest.raises(CassetteError, match="truncated or corrupt .*Object contains unknown field `x`"):
        load(path)


def test_request_bodies_restored_past_the_ceiling_are_refused(tmp_path):
    """Each record is a few bytes (an edit keeping all of a 16 MiB body), but restored they add up."""
    path = tmp_path / "edits.cassette"
    writer = CassetteWriter.create(path, HEADER)
    writer.close()
    first = big_interaction(16 << 20)
    edits = [_StoredInteraction(msgspec.structs.replace(first.request, body=BodyDelta(16 << 20, b"", 0)),
                                first.response)] * (MAX_RESTORED_BYTES // (16 << 20) + 1)
    with path.open("ab") as out:
        out.write(_chunk([first], 3) + _chunk(edits, 3))
    with pytest.raises(CassetteError, match="request bodies restore to over 190.7 MiB"):
        load(path)
