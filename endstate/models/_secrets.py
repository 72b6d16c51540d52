"""The credentials a run uses, and a Scrubber that keeps their values off disk.

    scrubber = Scrubber.for_run("openai/gpt-4.1", base_url, os.environ)
    scrubber.text(s) / scrubber.bytes(b) / scrubber.struct(obj) / scrubber.url(url)

Filtering headers and query keys by name (endstate.cassettes._scrub) stops a key
from being written where it is expected. This module stops it where it is not:
a server that echoes the key in a response body or header, an error message
quoting it, a base URL carrying it as `user:key@` or `?api_key=`. Every value in
effect is replaced by PLACEHOLDER, wherever it appears, in every form it may be
written in (as is, percent-encoded, JSON-escaped, and for URL userinfo the
base64 of a Basic authorization).

A value shorter than MIN_SECRET_LENGTH is not treated as a secret: replacing
every "abc" or "1" in a transcript would mangle it and still protect nothing
(real provider keys are dozens of characters long). The SDKs' placeholder key
for servers that need none is not a secret either.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

import msgspec

__all__ = [
    "PLACEHOLDER",
    "MIN_SECRET_LENGTH",
    "CREDENTIAL_ENV",
    "Scrubber",
    "SECRET_QUERY_KEYS",
    "is_secret_query_key",
    "split_query",
]

#: What a secret is replaced with: no character that needs escaping in JSON, a URL or a header.
PLACEHOLDER = "REDACTED"

#: Values shorter than this are never scrubbed (see the module docstring).
MIN_SECRET_LENGTH = 8

#: Environment variables the providers' SDKs read credentials or account ids from.
CREDENTIAL_ENV: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
)

#: Environment variables holding base URLs, which may carry userinfo or query keys.
URL_ENV: tuple[str, ...] = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")

# The key the SDKs are given for servers that want none (see endstate.models._spec).
_NOT_SECRET = frozenset({"not-needed"})

#: Query parameters that carry credentials (Azure, Gemini and gateways use these).
SECRET_QUERY_KEYS: tuple[str, ...] = (
    "api_key", "api-key", "apikey", "key", "token", "access_token", "auth", "signature", "sig",
)

T = TypeVar("T")


def is_secret_query_key(key: str) -> bool:
    """Whether a query parameter of this name carries a credential (Azure, Gemini, gateways)."""
    key = key.lower()
    return key in SECRET_QUERY_KEYS or key.endswith(("_key", "-key", "_token", "-token", "secret"))


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """A base URL without its query, and the query as a dict.

    The SDKs append the endpoint path to the base URL's raw path, query
    included (`/v1?key=K` becomes `/v1?key=Kchat/completions`), so a query
    has to travel as the client's default query instead.
    """
    parts = urlsplit(url)
    if not parts.query:
        return url, {}
    return urlunsplit(parts._replace(query="")), dict(parse_qsl(parts.query, keep_blank_values=True))


def _forms(value: str) -> set[str]:
    """The ways `value` may be written: as is, percent-encoded, percent-decoded, JSON-escaped."""
    forms = {value, quote(value, safe=""), quote_plus(value, safe=""), unquote(value)}
    escaped = {msgspec.json.encode(form).decode()[1:-1] for form in forms}
    # Some JSON encoders also escape "/" (as "\\/").
    return forms | escaped | {form.replace("/", "\\/") for form in escaped}


def _url_secrets(url: str) -> set[str]:
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:  # not a URL we can read; the value scrubbing still applies
        return set()
    found: set[str] = set()
    if password:
        found |= {password, unquote(password)}
        basic = f"{unquote(username or '')}:{unquote(password)}"
        found.add(base64.b64encode(basic.encode()).decode())
    elif username:  # `https://KEY@host`: some gateways take the key as the user name
        found |= {username, unquote(username)}
    found |= {value for key, value in parse_qsl(parts.query, keep_blank_values=True) if is_secret_query_key(key)}
    return found


class Scrubber:
    """Replaces every secret value it was built with by PLACEHOLDER.

    Built once per process from the run's credentials and applied at every write
    site; idempotent, so scrubbing what was already scrubbed changes nothing.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_LENGTH and secret not in _NOT_SECRET:
                forms |= _forms(secret)
        # Longest first, so a value is not half-replaced through one of its shorter forms.
        self._text = sorted((f for f in forms if len(f) >= MIN_SECRET_LENGTH), key=lambda f: (-len(f), f))
        self._bytes = [form.encode() for form in self._text]
        self._pattern = re.compile("|".join(map(re.escape, self._text))) if self._text else None

    @classmethod
    def for_run(cls, base_url: str | None = None, env: Mapping[str, str] | None = None,
                *, api_key: str | None = None) -> Scrubber:
        """The credentials in effect: provider keys from `env`, the explicit `api_key`,
        and what `base_url` (or a base URL from `env`) carries as userinfo or query keys."""
        env = env or {}
        secrets = {env.get(name, "") for name in CREDENTIAL_ENV} | {api_key or ""}
        for url in (base_url, *(env.get(name) for name in URL_ENV)):
            if url:
                secrets |= _url_secrets(url)
        return cls(secrets)

    def __bool__(self) -> bool:
        return bool(self._text)

    @property
    def values(self) -> tuple[str, ...]:
        """Every secret value in effect, in each form it may be written in."""
        return tuple(self._text)

    @property
    def shortest(self) -> int:
        return min(map(len, self._text), default=0)

    def text(self, value: str) -> str:
        if self._pattern is None or not value:
            return value
        return self._pattern.sub(PLACEHOLDER, value)

    def bytes(self, value: bytes) -> bytes:
        if not self._bytes or not value:
            return value
        for form in self._bytes:
            if form in value:
                value = value.replace(form, PLACEHOLDER.encode())
        return value

    def url(self, url: str | None) -> str | None:
        """A URL with its userinfo password and credential query values replaced whatever
        their length, then every known secret value."""
        if not url:
            return url
        try:
            parts = urlsplit(url)
            netloc = parts.netloc
            if parts.password is not None:
                netloc = f"{parts.username}:{PLACEHOLDER}@{netloc.rpartition('@')[2]}"
            query = urlencode([(k, PLACEHOLDER if is_secret_query_key(k) else v)
                               for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="")
            url = urlunsplit(parts._replace(netloc=netloc, query=query))
        except ValueError:
            pass
        return self.text(url)

    def struct(self, value: T) -> T:
        """A msgspec-encodable value with every string scrubbed (round-tripped through JSON:
        the placeholder needs no escaping, and JSON-escaped forms of secrets are covered)."""
        if not self:
            return value
        encoded = msgspec.json.encode(value)
        cleaned = self.bytes(encoded)
        if cleaned is encoded:
            return value
        return msgspec.json.decode(cleaned, type=type(value))

    def json(self, value: Any) -> bytes:
        """`value` as JSON bytes, scrubbed."""
        return self.bytes(msgspec.json.encode(value))
