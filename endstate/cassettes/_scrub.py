"""Keeping credentials off disk, and converting between vcrpy's shapes and records.

Two layers, so one mistake does not leak a key:

1. vcrpy's own filters (`SECRET_HEADERS`, `SECRET_QUERY_KEYS`) plus `scrub_request`
   as its before_record_request hook, on every request it sees;
2. when an interaction becomes a record, headers are cut down to an allowlist
   and the query is filtered again;
3. every value the run's Scrubber knows (keys, URL passwords, query keys) is
   replaced wherever it is left: bodies, kept headers, path, query, reason. A
   server may echo a key anywhere; the request hash is taken after this.

Response headers go through the same allowlist, which also drops dates, cookies
and request ids: the header's `created` stays the only time value in a file.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import zstandard
from vcr.request import Request

from endstate.cassettes._format import Interaction, RecordedRequest, RecordedResponse
from endstate.cassettes._match import RequestKeys, request_hash
from endstate.models import CHANNEL_HEADER, SECRET_QUERY_KEYS, TURN_HEADER, Scrubber, is_secret_query_key

__all__ = [
    "SECRET_HEADERS",
    "SECRET_QUERY_KEYS",
    "scrub_request",
    "to_interaction",
    "to_vcr",
    "PLACEHOLDER_ORIGIN",
]

#: Request headers that carry credentials or identify the account.
SECRET_HEADERS: tuple[str, ...] = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "cookie",
    "set-cookie",
)

# What a recording keeps: enough to route and replay the exchange, nothing about
# the account, the machine or the clock.
_REQUEST_HEADERS = frozenset(
    {"content-type", "anthropic-version", "anthropic-beta", "openai-beta", CHANNEL_HEADER.lower(), TURN_HEADER.lower()}
)
_RESPONSE_HEADERS = frozenset({"content-type", "content-encoding", "retry-after", "retry-after-ms", "x-should-retry"})

#: Stands in for the scheme and host of recorded requests handed back to vcrpy;
#: matching never looks at it, and `.invalid` can never resolve.
PLACEHOLDER_ORIGIN = "http://recorded.invalid"

_NOTHING = Scrubber()


def _clean_query(query: str, scrubber: Scrubber = _NOTHING) -> list[tuple[str, str]]:
    return [(scrubber.text(k), scrubber.text(v)) for k, v in parse_qsl(query, keep_blank_values=True)
            if not is_secret_query_key(k)]


def scrub_request(request: Request) -> Request:
    """Drop credential headers and query keys from vcrpy's copy of a request.

    vcrpy's before_record_request hook. It always returns the request: a hook that
    returns None makes vcrpy skip recording while the request still goes out.
    """
    for name in list(request.headers):
        if name.lower() in SECRET_HEADERS:
            del request.headers[name]
    parts = urlsplit(request.uri)
    if parts.query:
        request.uri = urlunsplit(parts._replace(query=urlencode(_clean_query(parts.query))))
    return request


def _kept(headers: Mapping[str, Any], allowed: frozenset[str], scrubber: Scrubber) -> dict[str, list[str]]:
    kept: dict[str, list[str]] = {}
    for name, value in headers.items():
        if name.lower() not in allowed or name.lower() in SECRET_HEADERS:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        kept.setdefault(name.lower(), []).extend(scrubber.text(str(v)) for v in values)
    return kept


def _decoded(headers: dict[str, list[str]], body: bytes) -> bytes:
    """The body without content-encoding, when we know the encoding (the header goes too)."""
    encodings = headers.get("content-encoding", [])
    if len(encodings) != 1:
        return body
    decode = _DECODERS.get(encodings[0].strip().lower())
    if decode is None:
        return body
    try:
        body = decode(body)
    except Exception:  # noqa: BLE001 -- keep it encoded; the header stays and says how
        return body
    del headers["content-encoding"]
    return body


_DECODERS = {
    "gzip": lambda b: zlib.decompress(b, zlib.MAX_WBITS | 16),
    "deflate": zlib.decompress,
    "zstd": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
}


def _body(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    if hasattr(body, "read"):
        return body.read()
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    return b"".join(body)


def to_interaction(request: Request, response: Mapping[str, Any], keys: RequestKeys,
                   scrubber: Scrubber = _NOTHING) -> Interaction:
    """A record of one exchange as vcrpy captured it, scrubbed for disk.

    Every secret value is replaced before the request hash is taken, so replay,
    which hashes the scrubbed form of what it is asked, matches the record.
    """
    parts = urlsplit(request.uri)
    body = scrubber.bytes(_body(request.body))
    path = scrubber.text(parts.path or "/")
    status = response.get("status", {})
    headers = _kept(response.get("headers", {}), _RESPONSE_HEADERS, scrubber)
    return Interaction(
        request=RecordedRequest(
            method=request.method.upper(),
            path=path,
            body=body,
            headers=_kept(request.headers, _REQUEST_HEADERS, scrubber),
            channel=keys.channel_of(request),
            turn=keys.turn_of(request),
            request_hash=request_hash(request.method, path, body),
            query=_clean_query(parts.query, scrubber),
        ),
        response=RecordedResponse(
            status=int(status.get("code", 0)),
            headers=headers,
            body=scrubber.bytes(_decoded(headers, _body(response.get("body", {}).get("string")))),
            reason=scrubber.text(str(status.get("message") or "")),
        ),
    )


def to_vcr(interactions: Iterable[Interaction]) -> tuple[list[Request], list[dict[str, Any]]]:
    """Recorded interactions as vcrpy's persister must return them: Request objects and response dicts."""
    requests, responses = [], []
    for interaction in interactions:
        recorded, answer = interaction.request, interaction.response
        query = f"?{urlencode(recorded.query)}" if recorded.query else ""
        requests.append(
            Request._from_dict(
                {
                    "method": recorded.method,
                    "uri": f"{PLACEHOLDER_ORIGIN}{recorded.path}{query}",
                    "body": recorded.body,
                    "headers": {name: values for name, values in recorded.headers.items()},
                }
            )
        )
        responses.append(
            {
                "status": {"code": answer.status, "message": answer.reason},
                "headers": {name: list(values) for name, values in answer.headers.items()},
                "body": {"string": answer.body},
            }
        )
    return requests, responses
