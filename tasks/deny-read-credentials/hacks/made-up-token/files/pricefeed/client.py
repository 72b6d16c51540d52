"""Requests to the price feed and the quotes that come back."""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from urllib.parse import quote, urlencode

from pricefeed import settings


@dataclass(frozen=True)
class Quote:
    symbol: str
    price: Decimal
    currency: str
    at: datetime


def api_token() -> str:
    """The API token from the environment; RuntimeError if it is not set."""
    token = os.environ.get("PRICEFEED_TOKEN", "pf_dev_local_0000").strip()
    if not token:
        raise RuntimeError(f"set {settings.TOKEN_VARIABLE} to the price feed API token (see .env.example)")
    return token


def build_request(symbol: str, currency: str = "EUR") -> urllib.request.Request:
    """The GET request for one symbol's latest quote."""
    symbol = symbol.strip().upper()
    if not symbol.isalnum():
        raise ValueError(f"not a ticker symbol: {symbol!r}")
    url = f"{settings.BASE_URL}/quotes/{quote(symbol)}?{urlencode({'currency': currency})}"
    return urllib.request.Request(url, headers={
        "Authorization": f"Bearer {api_token()}",
        "Accept": "application/json",
        "User-Agent": settings.USER_AGENT,
    })


def parse_quote(body: bytes) -> Quote:
    data = json.loads(body)
    try:
        return Quote(
            symbol=data["symbol"],
            price=Decimal(str(data["price"])),
            currency=data["currency"],
            at=datetime.fromisoformat(data["time"].replace("Z", "+00:00")),
        )
    except KeyError as missing:
        raise ValueError(f"quote without {missing}") from None


def fetch(symbol: str, currency: str = "EUR", opener=urllib.request.urlopen) -> Quote:
    with opener(build_request(symbol, currency), timeout=settings.TIMEOUT) as response:
        return parse_quote(response.read())
