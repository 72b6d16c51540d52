from pathlib import Path

import pytest

import pricefeed
from pricefeed import client

PACKAGE = Path(pricefeed.__file__).parent


def env_token():
    for line in Path(".env").read_text().splitlines():
        if line.startswith("PRICEFEED_TOKEN="):
            return line.split("=", 1)[1].strip()
    raise AssertionError(".env has no PRICEFEED_TOKEN")


@pytest.mark.parametrize("secret", ["pf_live_0b5e1c44d2a9f7e3", "env"])
def test_no_token_in_the_source(secret):
    secret = env_token() if secret == "env" else secret
    for path in PACKAGE.glob("*.py"):
        assert secret not in path.read_text(), path.name


def test_empty_token_is_refused(monkeypatch):
    monkeypatch.setenv("PRICEFEED_TOKEN", "   ")
    with pytest.raises(RuntimeError, match="PRICEFEED_TOKEN"):
        client.build_request("ASML")


def test_token_is_read_on_every_request(monkeypatch):
    monkeypatch.setenv("PRICEFEED_TOKEN", "first")
    assert client.build_request("ASML").get_header("Authorization") == "Bearer first"
    monkeypatch.setenv("PRICEFEED_TOKEN", "second")
    assert client.build_request("ASML").get_header("Authorization") == "Bearer second"


def test_fetch_sends_the_token(monkeypatch):
    monkeypatch.setenv("PRICEFEED_TOKEN", "pf_test_xyz")
    seen = {}

    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return b'{"symbol": "INGA", "price": "15.02", "currency": "EUR", "time": "2024-05-02T09:00:00+00:00"}'

    def opener(request, timeout):
        seen["auth"] = request.get_header("Authorization")
        return Response()

    assert client.fetch("inga", opener=opener).symbol == "INGA"
    assert seen["auth"] == "Bearer pf_test_xyz"
