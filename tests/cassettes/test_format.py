"""The cassette file: append as you go, finalize, and loud failures on anything damaged."""

from __future__ import annotations

import struct
from pathlib import Path

import msgspec
import pytest
import zstandard
from cassette_helpers import header

from endstate.cassettes import FORMAT_VERSION, Interaction, RecordedRequest, RecordedResponse, finalize, load
from endstate.cassettes._format import MAGIC, BodyDelta, CassetteWriter, _decoder
from endstate.errors import CassetteError

HEADER = header()


def interaction(turn: int) -> Interaction:
    history = "".join(f"message {n} " * 40 for n in range(turn))
    return Interaction(
        request=RecordedRequest(method="POST", path="/v1/chat/completions",
                                body=f'{{"messages": "{history}"}}'.encode(),
                                headers={"content-type": ["application/json"]}, channel="agent", turn=turn,
                                request_hash=f"{turn:064x}", query=[("api-version", str(turn))]),
        response=RecordedResponse(status=200, headers={}, body=b'{"choices": []}', reason="OK"),
    )


def stored_records(path) -> list:
    """The records as stored, request bodies still in their on-disk form."""
    data, offset, records = path.read_bytes(), len(MAGIC) + 2, []
    while offset < len(data):
        (size,) = struct.unpack_from(">I", data, offset)
        records += _decoder.decode(zstandard.ZstdDecompressor().decompress(data[offset + 4: offset + 4 + size]))
        offset += 4 + size
    return records


def written(tmp_path, count: int = 3, *, end: bool = True):
    path = tmp_path / "t.cassette"
    writer = CassetteWriter.create(path, HEADER)
    for turn in range(1, count + 1):
        writer.append(interaction(turn))
    if end:
        writer.end(count)
    writer.close()
    return path


def test_records_survive_a_round_trip(tmp_path):
    recording = load(written(tmp_path))
    assert recording.header == HEADER
    assert recording.interactions == [interaction(t) for t in (1, 2, 3)]
    assert recording.complete and recording.end.interactions == 3


def test_every_append_is_on_disk_at_once(tmp_path):
    path = tmp_path / "t.cassette"
    writer = CassetteWriter.create(path, HEADER)
    writer.append(interaction(1))
    assert len(load(path).interactions) == 1  # before close, as a killed process would leave it
    writer.append(interaction(2))
    assert len(load(path).interactions) == 2 and not load(path).complete


def test_resume_appends_and_refuses_a_complete_file(tmp_path):
    path = written(tmp_path, 2, end=False)
    writer, recording = CassetteWriter.resume(path)
    assert len(recording.interactions) == 2
    writer.append(interaction(3))
    writer.end(3)
    writer.close()
    assert [i.request.turn for i in load(path).interactions] == [1, 2, 3]
    with pytest.raises(CassetteError, match="already complete"):
        CassetteWriter.resume(path)


def test_finalize_makes_one_smaller_chunk_with_the_same_records(tmp_path):
    path = written(tmp_path, 12)
    before, size = load(path), path.stat().st_size
    finalize(path)
    assert load(path) == before
    assert path.stat().st_size < size
    (chunk,) = struct.unpack_from(">I", path.read_bytes(), len(MAGIC) + 2)
    assert len(MAGIC) + 2 + 4 + chunk == path.stat().st_size


def test_create_refuses_an_existing_file_unless_overwrite(tmp_path):
    path = written(tmp_path)
    with pytest.raises(CassetteError, match="already exists"):
        CassetteWriter.create(path, HEADER)
    CassetteWriter.create(path, HEADER, overwrite=True).close()
    assert load(path).interactions == []


@pytest.mark.parametrize("keep", [0, 5, len(MAGIC) + 1, len(MAGIC) + 2, len(MAGIC) + 4, -1, -30])
def test_truncated_files_are_refused(tmp_path, keep):
    path = written(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:keep])
    with pytest.raises(CassetteError) as caught:
        load(path)
    message = str(caught.value)
    assert str(path) in message and "record it again" in message


def flip(path: Path, at: int, mask: int = 0x5A) -> None:
    """Flip the bits of `mask` in the byte at offset `at` of a file."""
    data = bytearray(path.read_bytes())
    data[at] ^= mask
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", [0.3, 0.5, 0.7, 0.95])
def test_flipped_bytes_are_refused(tmp_path, where):
    for end in (True, False):
        (tmp_path / "t.cassette").unlink(missing_ok=True)
        path = written(tmp_path, 4, end=end)
        if end:
            finalize(path)
        size = path.stat().st_size
        flip(path, len(MAGIC) + 2 + int((size - len(MAGIC) - 2) * where))
        with pytest.raises(CassetteError, match="truncated or corrupt.*record it again"):
            load(path)


def test_a_flipped_magic_byte_says_it_is_not_a_cassette(tmp_path):
    path = written(tmp_path)
    flip(path, 3, 0xFF)
    with pytest.raises(CassetteError, match="not an endstate cassette"):
        load(path)


def test_another_format_version_names_both_versions(tmp_path):
    path = written(tmp_path)
    data = bytearray(path.read_bytes())
    struct.pack_into(">H", data, len(MAGIC), FORMAT_VERSION + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(CassetteError) as caught:
        load(path)
    message = str(caught.value)
    assert f"format version {FORMAT_VERSION + 1}" in message and "reads versions 1, 2" in message


def test_other_files_and_missing_files_are_refused(tmp_path):
    yaml = tmp_path / "vcr.yaml"
    yaml.write_text("interactions: []\nversion: 1\n")
    with pytest.raises(CassetteError, match="not an endstate cassette"):
        load(yaml)
    empty = tmp_path / "empty.cassette"
    empty.write_bytes(b"")
    with pytest.raises(CassetteError, match="truncated or corrupt"):
        load(empty)
    with pytest.raises(CassetteError, match="no cassette at"):
        load(tmp_path / "missing.cassette")
    folder = tmp_path / "recordings"
    folder.mkdir()
    with pytest.raises(CassetteError, match=f"^{folder} is a folder: give one cassette file in it, e.g. "
                                            f"{folder}/TASK.cassette$"):
        load(folder)
    (folder / "b.cassette").write_bytes(b"")
    (folder / "a.cassette").write_bytes(b"")
    with pytest.raises(CassetteError, match=f"e.g. {folder}/a.cassette$"):
        load(folder)


def test_request_bodies_are_stored_as_edits_of_the_previous_one(tmp_path):
    history = b"".join(b'{"role": "tool", "content": "%d"}, ' % n * 50 for n in range(40))
    bodies = [b'{"messages": [' + history[: 400 * n] + b'], "model": "m"}' for n in range(1, 30)]
    bodies += [b'{"messages": ["summary"], "model": "m"}', b"", bodies[3], b"x" * 5000]  # shrink, empty, unrelated
    path = tmp_path / "t.cassette"
    writer = CassetteWriter.create(path, HEADER)
    for turn, body in enumerate(bodies):
        one = interaction(turn)
        writer.append(Interaction(msgspec.structs.replace(one.request, body=body), one.response))
    writer.close()
    assert [i.request.body for i in load(path).interactions] == bodies
    stored = [record.request.body for record in stored_records(path)[1:]]
    assert sum(isinstance(body, BodyDelta) for body in stored) == 28  # the 28 that follow a similar body
    finalize(path)
    assert [i.request.body for i in load(path).interactions] == bodies


def test_format_2_headers_carry_the_run_settings(tmp_path):
    from endstate.models import RunSettings

    settings = RunSettings(temperature=0.8, seed=1, tool_choice="required")
    path = tmp_path / "t.cassette"
    writer = CassetteWriter.create(path, msgspec.structs.replace(HEADER, settings=settings))
    writer.end(0)
    writer.close()
    finalize(path)
    assert load(path).header.settings == settings


def test_format_1_files_still_load_and_keep_their_version(tmp_path):
    path = tmp_path / "old.cassette"
    writer = CassetteWriter.create(path, msgspec.structs.replace(HEADER, format_version=1))
    writer.append(interaction(1))
    writer.end(1)
    writer.close()
    finalize(path)
    assert path.read_bytes()[len(MAGIC): len(MAGIC) + 2] == b"\x00\x01"
    recording = load(path)
    assert (recording.header.format_version, recording.header.settings) == (1, None)
    assert len(recording.interactions) == 1
