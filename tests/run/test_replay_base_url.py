"""A replayed foreign agent is pointed at the recorded path prefix, whatever its wire format."""

from __future__ import annotations

import pytest

from endstate.cassettes import CassetteJob, Interaction, RecordedRequest, RecordedResponse, Recording
from endstate.cassettes._format import write
from endstate.run._replay import replay_base_url
from tests.cassettes.cassette_helpers import header

HEADER = header("anthropic/m")


def _cassette(tmp_path, path: str) -> CassetteJob:
    request = RecordedRequest(method="POST", path=path, body=b"{}", headers={}, channel="agent", turn=0,
                              request_hash="0" * 64, query=[])
    recording = Recording(str(tmp_path / "t.cassette"), HEADER, [Interaction(request, RecordedResponse(status=200, headers={}, body=b"{}", reason="OK"))])
    write(tmp_path / "t.cassette", recording)
    return CassetteJob(mode="replay", path=str(tmp_path / "t.cassette"))


# The anthropic SDK and an agent speaking the Messages API (its endpoint is /v1/messages) add /v1
# themselves: the stand-in is the root above it, or every replayed request would ask /v1/v1/messages.
@pytest.mark.parametrize("path, prefix", [("/v1/chat/completions", "/v1"), ("/proxy/v1/messages", "/proxy"),
                                          ("/v1/messages", ""), ("/v1/responses", "/v1")])
def test_each_wire_formats_prefix_is_kept(tmp_path, path, prefix):
    assert replay_base_url(_cassette(tmp_path, path)) == f"http://127.0.0.1:9{prefix}"


def test_no_url_for_a_recording_or_an_unreadable_cassette(tmp_path):
    assert replay_base_url(CassetteJob(mode="record", path=str(tmp_path / "t.cassette"))) is None
    (tmp_path / "bad.cassette").write_bytes(b"not a cassette")
    assert replay_base_url(CassetteJob(mode="replay", path=str(tmp_path / "bad.cassette"))) is None
