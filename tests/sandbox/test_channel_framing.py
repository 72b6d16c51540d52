"""The channel's wire format over a socket pair, without an engine: replies split
anywhere across the engine's frames, the server's own words kept for errors, and a
deadline that holds."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from endstate.sandbox._channel import Channel, ChannelBroken


def _frame(stream: int, data: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data


def _reply(header: dict, out: bytes = b"", err: bytes = b"") -> bytes:
    encoded = json.dumps({**header, "out": len(out), "err": len(err)}).encode()
    return len(encoded).to_bytes(4, "big") + encoded + out + err


@pytest.fixture
def pair():
    ours, theirs = socket.socketpair()
    yield Channel(ours), theirs
    ours.close()
    theirs.close()


def _read_request(sock: socket.socket) -> tuple[dict, bytes]:
    head = sock.recv(4)
    request = json.loads(sock.recv(int.from_bytes(head, "big")))
    payload = b""
    while len(payload) < request["size"]:
        payload += sock.recv(request["size"] - len(payload))
    return request, payload


def test_a_reply_split_across_frames_and_chunks_reads_whole(pair):
    channel, server = pair
    answer = _reply({"code": 0}, b"x" * 70_000, b"warn\n")

    def serve() -> None:
        request, payload = _read_request(server)
        assert request["op"] == "run" and payload == b"input"
        for start in range(0, len(answer), 997):  # frames that cut the header, the lengths, the data
            server.sendall(_frame(1, answer[start:start + 997]))
            if start == 0:
                server.sendall(_frame(2, b""))  # an empty frame on the other stream changes nothing

    thread = threading.Thread(target=serve)
    thread.start()
    reply, out, err = channel.request({"op": "run"}, b"input", deadline=time.monotonic() + 10)
    thread.join()
    assert reply["code"] == 0 and out == b"x" * 70_000 and err == b"warn\n"


def test_two_requests_in_a_row_each_get_their_own_reply(pair):
    channel, server = pair
    server.sendall(_frame(1, _reply({"code": 1}, b"first") + _reply({"code": 2}, b"second")[:5]))
    server.sendall(_frame(1, _reply({"code": 2}, b"second")[5:]))
    assert channel.request({"op": "run"}, deadline=time.monotonic() + 5)[1] == b"first"
    assert channel.request({"op": "run"}, deadline=time.monotonic() + 5)[1] == b"second"


def test_a_server_that_dies_is_named_with_what_it_said(pair):
    channel, server = pair
    server.sendall(_frame(2, b"Traceback: the server broke\n"))
    server.shutdown(socket.SHUT_WR)
    with pytest.raises(ChannelBroken, match="the server broke"):
        channel.request({"op": "run"}, deadline=time.monotonic() + 5)
    with pytest.raises(ChannelBroken, match="broke earlier"):  # and it stays broken
        channel.request({"op": "run"}, deadline=time.monotonic() + 5)


def test_silence_ends_at_the_deadline(pair):
    channel, _ = pair
    started = time.monotonic()
    with pytest.raises(ChannelBroken):
        channel.request({"op": "run"}, deadline=time.monotonic() + 0.3)
    assert time.monotonic() - started < 5
    assert channel.broken
