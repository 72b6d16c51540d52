"""Which recorded interaction answers a request: the request hash and the two matchers.

    strict     the request hash is equal: method, path and body, byte-for-byte in
               meaning (JSON is compared parsed, keys sorted). The determinism test.
    sequence   the channel is equal; recorded answers are served in recorded order
               per channel whatever the request says. The mutation check.
    turn       the channel and agent turn are equal, and so are the prompt and tool outputs
               the request carries: the prefix of a fork onto another wire format.
    conversation  the method and the body are equal with the body's "model" left out,
               whatever the path, and an assistant's empty content ("", null) read as
               none: the prefix of a fork, which another model continues.

vcrpy serves the first unplayed recorded interaction its matchers accept, so a
matcher that compares channels alone is all "in order per channel" needs.
Matchers are plain functions of (request made, recorded request) that raise
AssertionError saying how the two differ, as vcrpy expects.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import msgspec

from endstate.errors import CassetteError
from endstate.models import CHANNEL_HEADER, TURN_HEADER, Scrubber

if TYPE_CHECKING:
    from vcr.request import Request

__all__ = ["MATCH_MODES", "MatchMode", "request_hash", "canonical_body", "RequestKeys", "check_match_mode"]

MatchMode = Literal["strict", "sequence"]
MATCH_MODES: tuple[str, ...] = ("strict", "sequence")


def check_match_mode(match: str) -> MatchMode:
    if match not in MATCH_MODES:
        raise CassetteError(f"unknown cassette match mode {match!r}: use one of {', '.join(MATCH_MODES)}")
    return match  # type: ignore[return-value]


def canonical_body(body: bytes | str | None) -> object:
    """The body as parsed JSON, or as text when it is not JSON."""
    if body is None:
        return ""
    if isinstance(body, str):
        body = body.encode()
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        return body.decode("utf-8", "replace")


def request_hash(method: str, path: str, body: bytes | str | None) -> str:
    """sha256 (hex) of the canonical JSON of method, path and body.

    Scheme, host, port, query and headers are left out: a recording must match
    wherever the server listened and whatever key the run used.
    """
    document = {"method": method.upper(), "path": path or "/", "body": canonical_body(body)}
    return hashlib.sha256(msgspec.json.encode(document, order="sorted")).hexdigest()


def _body_bytes(request: Request) -> bytes | None:
    body = request.body
    if body is None or isinstance(body, bytes):
        return body
    if hasattr(body, "read"):  # vcrpy hands file-like bodies back as a fresh BytesIO
        return body.read()
    return b"".join(body)


def _no_empty_content(messages: object) -> object:
    """Chat messages with an empty assistant content left out: providers differ only in the form of
    "no text beside the tool calls" (absent, null, or "" for servers that refuse a null), so a fork
    of one provider's recording onto another's is asked the same conversation in another form."""
    if not isinstance(messages, list):
        return messages
    return [{k: v for k, v in m.items() if not (k == "content" and v in ("", None))}
            if isinstance(m, dict) and m.get("role") == "assistant" else m for m in messages]


class RequestKeys:
    """The hash, channel and turn of vcrpy requests, each computed once per request object.

    vcrpy asks a matcher about every recorded request for each request made, so
    the hash of a long conversation would otherwise be recomputed many times.
    The matchers are bound methods registered on one VCR instance.

    The hash is taken over the request with every secret value scrubbed, as the
    recording stored it: a key a server echoed into the conversation comes back
    in the next request, and must hash the same whether it was scrubbed on the
    way to disk (record) or is already the placeholder (replay).
    """

    def __init__(self, scrubber: Scrubber | None = None) -> None:
        self._hashes: weakref.WeakKeyDictionary[Request, str] = weakref.WeakKeyDictionary()
        self._conversations: weakref.WeakKeyDictionary[Request, str] = weakref.WeakKeyDictionary()
        self.scrubber = scrubber or Scrubber()

    def hash_of(self, request: Request) -> str:
        known = self._hashes.get(request)
        if known is None:
            scrub = self.scrubber
            known = request_hash(request.method, scrub.text(urlsplit(request.uri).path),
                                 scrub.bytes(_body_bytes(request) or b""))
            self._hashes[request] = known
        return known

    def conversation_of(self, request: Request) -> str:
        """sha256 of the method and the scrubbed body without its "model": what a fork's prefix matches on."""
        known = self._conversations.get(request)
        if known is None:
            body = canonical_body(self.scrubber.bytes(_body_bytes(request) or b""))
            if isinstance(body, dict):
                body = {key: _no_empty_content(value) if key == "messages" else value
                        for key, value in body.items() if key != "model"}
            document = {"method": request.method.upper(), "body": body}
            known = hashlib.sha256(msgspec.json.encode(document, order="sorted")).hexdigest()
            self._conversations[request] = known
        return known

    def endstate_conversation(self, made: Request, recorded: Request) -> None:
        """The fork prefix's matcher."""
        if self.conversation_of(made) != self.conversation_of(recorded):
            raise AssertionError("the conversation differs from the recorded one")

    @staticmethod
    def channel_of(request: Request) -> str:
        return request.headers.get(CHANNEL_HEADER) or "agent"

    @staticmethod
    def turn_of(request: Request) -> int | None:
        try:
            return int(request.headers.get(TURN_HEADER, ""))
        except ValueError:
            return None

    def endstate_turn(self, made: Request, recorded: Request) -> None:
        """The prefix matcher of a fork across wire formats: the same channel and agent turn, and
        the same prompt and tool outputs said in it (the bodies' shapes differ by format)."""
        from endstate.cassettes._crosswire import said

        if (self.channel_of(made), self.turn_of(made)) != (self.channel_of(recorded), self.turn_of(recorded)):
            raise AssertionError("another channel or turn")
        if said(self.scrubber.bytes(_body_bytes(made) or b""), urlsplit(made.uri).path) != \
                said(_body_bytes(recorded) or b"", urlsplit(recorded.uri).path):
            raise AssertionError("the prompt or a tool output differs from the recorded one")

    def endstate_request_hash(self, made: Request, recorded: Request) -> None:
        """The strict matcher."""
        made_hash, recorded_hash = self.hash_of(made), self.hash_of(recorded)
        if made_hash != recorded_hash:
            raise AssertionError(f"request hash {made_hash[:16]} != recorded {recorded_hash[:16]}")

    def endstate_channel(self, made: Request, recorded: Request) -> None:
        """The sequence matcher."""
        made_channel, recorded_channel = self.channel_of(made), self.channel_of(recorded)
        if made_channel != recorded_channel:
            raise AssertionError(f"channel {made_channel!r} != recorded {recorded_channel!r}")

    def matcher_for(self, match: MatchMode | Literal["conversation", "turn"]):
        """(name, function) of the matcher to register for `match`."""
        function = {"strict": self.endstate_request_hash, "sequence": self.endstate_channel,
                    "conversation": self.endstate_conversation, "turn": self.endstate_turn}[match]
        return function.__name__, function
