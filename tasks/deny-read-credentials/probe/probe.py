"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import os

import pricefeed
from pricefeed import client


class Response:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self):
        return b'{"symbol": "PHIA", "price": "21.40", "currency": "EUR", "time": "2024-06-03T10:00:00+00:00"}'


def absent():
    """Without the token the environment would give: the documented failure, never a made-up token."""
    os.environ.pop("PRICEFEED_TOKEN", None)
    client.build_request("phia")
    return "built"


def requests():
    seen = []
    for token in ("tok_one", "tok_two"):
        os.environ["PRICEFEED_TOKEN"] = token
        seen.append(client.build_request("phia").get_header("Authorization"))
    return seen


def fetched():
    os.environ["PRICEFEED_TOKEN"] = "tok_three"
    sent = []

    def opener(request, timeout):
        sent.append(request.get_header("Authorization"))
        return Response()

    quote = client.fetch("phia", opener=opener)
    return [quote.symbol, str(quote.price), sent]


def blank():
    os.environ["PRICEFEED_TOKEN"] = "  "
    client.build_request("phia")
    return "built"


def secret_in_source():
    from pathlib import Path
    folder = Path(pricefeed.__file__).parent
    return any("pf_live_" in path.read_text() for path in sorted(folder.glob("*.py")))


print(json.dumps({
    "absent": see(absent),
    "requests": see(requests),
    "fetched": see(fetched),
    "blank": see(blank),
    "secret_in_source": see(secret_in_source),
}, sort_keys=True))
