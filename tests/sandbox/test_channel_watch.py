"""A request whose reply can never come (the server stopped under it) ends as soon as the channel's
watch sees why, not at its deadline; a channel without a watch waits for the deadline, as before."""

from __future__ import annotations

import socket
import time

import pytest

from endstate.sandbox import _channel
from endstate.sandbox._channel import Channel, ChannelBroken, ChannelStalled


@pytest.fixture
def silent():
    """A channel to a server that reads the request and never answers."""
    ours, theirs = socket.socketpair()
    yield Channel(ours)
    ours.close()
    theirs.close()


def test_a_stopped_server_ends_the_request_once_the_watch_sees_it(silent, monkeypatch):
    monkeypatch.setattr(_channel, "WATCH_S", 0.05)
    asked = []
    silent.watch = lambda: (asked.append(1), "the server is stopped" if len(asked) >= 3 else "")[1]
    with pytest.raises(ChannelStalled, match="the server is stopped"):
        silent.request({"op": "run"}, deadline=time.monotonic() + 120)  # would wait two minutes unwatched
    assert len(asked) == 3 and silent.broken


def test_without_a_watch_the_deadline_decides(silent):
    with pytest.raises(ChannelBroken) as raised:
        silent.request({"op": "run"}, deadline=time.monotonic() + 0.2)
    assert not isinstance(raised.value, ChannelStalled) and "deadline" in str(raised.value)
