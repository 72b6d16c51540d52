"""Fixtures for the cassette tests; the helpers they use live in cassette_helpers.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cassette_helpers import ChatServer


@pytest.fixture
def server() -> Iterator[ChatServer]:
    running = ChatServer()
    yield running
    running.stop()
