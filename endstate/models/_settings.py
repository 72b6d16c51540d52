"""Run settings, the headers that tag each completion, and what both SDK clients are built with.

Below the adapters and the spec that builds them: the adapters, the cassette matcher
and the scripted server all read these, and none of them needs `open_model`.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from endstate.models._types import Channel

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "CHANNEL_HEADER",
    "TURN_HEADER",
    "AttemptCounter",
    "completion_headers",
    "sdk_options",
    "RunSettings",
    "REASONING_EFFORTS",
    "MIN_THINKING_BUDGET",
]

#: Request headers that tag each completion; the cassette matcher and the scripted
#: server both read them.
CHANNEL_HEADER = "X-Endstate-Channel"
TURN_HEADER = "X-Endstate-Turn"


def completion_headers(channel: Channel, turn: int) -> dict[str, str]:
    """The headers that tag one completion's request (every attempt of it)."""
    return {CHANNEL_HEADER: channel, TURN_HEADER: str(turn)}


class AttemptCounter:
    """An httpx2 request hook counting HTTP attempts per completion.

    Each attempt carries the completion's channel and turn headers, so attempts
    are tallied per (channel, turn) and retries = attempts - 1.
    """

    def __init__(self) -> None:
        self._attempts: collections.Counter[tuple[str, str]] = collections.Counter()

    def __call__(self, request: httpx2.Request) -> None:
        self._attempts[(request.headers.get(CHANNEL_HEADER, ""), request.headers.get(TURN_HEADER, ""))] += 1

    def start(self, channel: str, turn: int) -> None:
        self._attempts.pop((channel, str(turn)), None)

    def retries(self, channel: str, turn: int) -> int:
        """Retries made for this completion; forgets it."""
        return max(self._attempts.pop((channel, str(turn)), 0) - 1, 0)


def sdk_options(settings: RunSettings, api_key: str, base_url: str | None,
                extra_headers: Mapping[str, str] | None) -> tuple[AttemptCounter, dict[str, Any]]:
    """What both official SDK clients are built with: the run's retry ceiling and
    timeout, and an HTTP client whose request hook counts every attempt."""
    import httpx2

    from endstate.models._secrets import split_query
    from endstate.models._tls import CONTEXT

    counter = AttemptCounter()
    http = httpx2.Client(event_hooks={"request": [counter]}, follow_redirects=True, timeout=settings.timeout_s,
                         verify=CONTEXT)
    base_url, query = split_query(base_url) if base_url else (base_url, {})
    return counter, {
        "api_key": api_key,
        "base_url": base_url,
        "default_query": query or None,
        "max_retries": settings.max_retries,
        "timeout": settings.timeout_s,
        "default_headers": dict(extra_headers or {}),
        "http_client": http,
    }


#: What `reasoning_effort` may be (the values Chat Completions takes).
REASONING_EFFORTS: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh")

#: The smallest thinking budget the Messages API takes.
MIN_THINKING_BUDGET = 1024


class RunSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How every completion of a run is requested; recorded on the benchmark card.

    The reasoning settings default to UNSET, which msgspec leaves out of every
    encoding: with them off, a cassette header, a run card and every request read
    byte for byte as they did before the settings existed, so recordings made
    then keep replaying.
    """

    temperature: float = 0.0
    #: Sent where the provider supports it; None sends no seed.
    seed: int | None = 0
    #: HTTP retries the SDK may make per completion (it backs off between them).
    max_retries: int = 0
    #: Seconds one HTTP attempt may take.
    timeout_s: float = 120
    max_output_tokens: int = 2048
    #: What the agent loop asks for on its turns; adapters send what each call names.
    tool_choice: Literal["auto", "required"] = "auto"
    #: Anthropic extended thinking: tokens the model may spend thinking per turn (at
    #: least 1024, below max_output_tokens). UNSET: thinking off.
    thinking_budget: int | msgspec.UnsetType = msgspec.UNSET
    #: OpenAI reasoning models (`reasoning_effort` on Chat Completions). UNSET: not sent.
    reasoning_effort: str | msgspec.UnsetType = msgspec.UNSET
    #: Anthropic prompt caching: cache breakpoints on the system prompt, the tools and the
    #: latest turn, so each turn reads the conversation so far from the cache. UNSET: off.
    prompt_cache: bool | msgspec.UnsetType = msgspec.UNSET

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, not {self.max_retries}")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, not {self.timeout_s}")
        if self.max_output_tokens < 1:
            raise ValueError(f"max_output_tokens must be 1 or more, not {self.max_output_tokens}")
        budget = self.thinking_budget
        if budget is not msgspec.UNSET and not MIN_THINKING_BUDGET <= budget < self.max_output_tokens:
            raise ValueError(f"thinking_budget must be at least {MIN_THINKING_BUDGET} and below max_output_tokens "
                             f"({self.max_output_tokens}), not {budget}: raise max_output_tokens or lower the budget")
        if self.reasoning_effort is not msgspec.UNSET and self.reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, "
                             f"not {self.reasoning_effort!r}")
        if self.prompt_cache is False:
            raise ValueError("prompt_cache is true or left out (off)")
