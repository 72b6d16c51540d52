"""What the two official-SDK adapters share: building the client, one table from each
SDK's exception types to ModelError, applied in one place, the run's request limits
(`_ratelimit`), and closing.

    body, status, waits = self._send(channel, turn, lambda: ...with_raw_response.create(...))

An adapter names its SDK's exceptions (`SDKErrors`), the environment variable of its
key, and how its client is made; it keeps its own wire format.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, NamedTuple

from endstate.models._errors import ModelError, model_error, provider_says, what_to_do
from endstate.models._local import server_exit
from endstate.models._ratelimit import RequestGate, RequestLimits, is_rate_limited, retry_after
from endstate.models._settings import RunSettings, sdk_options

__all__ = ["SDKErrors", "SDKModel"]


class SDKErrors(NamedTuple):
    """An SDK's exception types, most specific first, as `_sdk_errors` tries them."""

    #: The provider answered with an error status (carries status_code, body, message).
    status: type[Exception]
    #: No answer within the run's timeout.
    timeout: type[Exception]
    #: No connection (the cause says why).
    connection: type[Exception]
    #: Anything else the SDK raises.
    other: type[Exception]


class _RateLimited(Exception):
    """Inside `_send`: the provider asked to slow down (carries its SDK exception)."""

    def __init__(self, cause: Exception, asked: float | None) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.asked = asked


class SDKModel:
    """A Model reached through an official SDK, non-streaming; see OpenAIChatModel, AnthropicModel."""

    provider: str = ""
    errors: ClassVar[SDKErrors]

    def __init__(
        self,
        spec: str,
        *,
        model: str,
        settings: RunSettings,
        api_key: str,
        base_url: str | None = None,
        extra_headers: Mapping[str, str] | None = None,
        limits: RequestLimits | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.spec = spec
        self.model = model
        self.settings = settings
        self._api_key = api_key
        self._counter, options = sdk_options(settings, api_key, base_url, extra_headers)
        self._http = options["http_client"]
        self._client = self._make_client(options)
        self.base_url = str(self._client.base_url)
        self._gate = RequestGate(limits or RequestLimits(), seed=settings.seed, sleep=sleep)

    def _make_client(self, options: dict[str, Any]) -> Any:
        raise NotImplementedError

    @property
    def key_env(self) -> str | None:
        """The environment variable a missing or refused key is looked for in."""
        return None

    def close(self) -> None:
        self._client.close()
        self._http.close()

    def _send(self, channel: str, turn: int, create: Callable[[], tuple[bytes, int]]) -> tuple[bytes, int, int]:
        """(body, status, waits) of one completion's request: sent while holding a slot of the
        run's ceiling, rate-limited answers waited out (at most `rate_limit_waits` times)."""
        self._counter.start(channel, turn)
        for waits in itertools.count():
            try:
                with self._gate.slot(), self._sdk_errors(channel, turn, throttle=True):
                    body, status = create()
                return body, status, waits
            except _RateLimited as limited:
                if waits >= self._gate.limits.rate_limit_waits:
                    exc = limited.cause
                    raise self._failure(exc.status_code, provider_says(exc.body, exc.message), channel, turn,
                                        waits=waits) from None
                self._gate.wait(self._gate.delay(limited.asked, channel, turn, waits))
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _sdk_errors(self, channel: str, turn: int, *, throttle: bool = False) -> Iterator[None]:
        """Every SDK exception raised inside, as the ModelError that says what to do; with
        `throttle`, a rate-limited answer as _RateLimited, for `_send` to wait out."""
        try:
            yield
        except self.errors.status as exc:
            if throttle and is_rate_limited(exc.status_code, exc.body):
                raise _RateLimited(exc, retry_after(exc.response.headers)) from None
            raise self._failure(exc.status_code, provider_says(exc.body, exc.message), channel, turn) from None
        except self.errors.timeout:
            raise self._failure(
                None, f"no answer within timeout_s={self.settings.timeout_s:g}", channel, turn,
                hint=server_exit(self.base_url) or "raise timeout_s or check that the server is alive",
            ) from None
        except self.errors.connection as exc:
            cause = exc.__cause__ or exc
            # A local llama.cpp server that died mid-request says so; the base URL was right.
            raise self._failure(
                None, f"could not connect ({cause})", channel, turn, hint=server_exit(self.base_url) or "",
            ) from None
        except self.errors.other as exc:
            raise self._failure(None, f"{type(exc).__name__}: {exc}", channel, turn) from None

    def _failure(self, status: int | None, detail: str, channel: str, turn: int, *, hint: str = "",
                 waits: int = 0) -> ModelError:
        retries = self._counter.retries(channel, turn)
        what = f"HTTP {status} ({detail})" if status is not None else detail
        if waits:
            what += f", still after waiting it out {waits} {'time' if waits == 1 else 'times'}"
        return self._error(what, status, retries, hint or what_to_do(status, key_env=self.key_env))

    def _error(self, what: str, status: int | None, retries: int, hint: str) -> ModelError:
        return model_error(
            self.spec, self.base_url, what, provider=self.provider, status=status, retries=retries,
            hint=hint, secret=self._api_key,
        )
