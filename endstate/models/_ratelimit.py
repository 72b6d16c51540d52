"""Living with a provider's limits: a ceiling on requests in flight, and waiting out 429s.

    limits = RequestLimits(max_concurrent=2, slots="/tmp/endstate-slots-x")
    gate = RequestGate(limits, seed=0)              # one per model, in each task's process
    with gate.slot():                                # at most 2 requests in flight over the run
        ...one HTTP attempt...
    gate.delay(retry_after, channel, turn, wait)     # how long to wait before the next one

Tasks run in processes of their own (`-j`), so the ceiling is held by file locks:
`max_concurrent` lock files in one folder, and a request goes out only while its
process holds one of them. The ceiling is the model connection's, apart from `-j`,
which counts sandboxes.

A rate-limited answer (429, 529, or an `overloaded_error` body) is waited out: the
provider's Retry-After (seconds, or retry-after-ms) when it gives one, else an
exponential backoff, plus jitter. The jitter is drawn from a hash of the run's seed,
the completion and the wait number, never from a clock or a global RNG, so the same
run waits the same; and a replay, which has no provider to spare, never sleeps.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import msgspec

__all__ = ["RequestLimits", "RequestGate", "RATE_LIMIT_STATUSES", "is_rate_limited", "retry_after"]

#: Statuses that mean "slow down", not "this request is wrong".
RATE_LIMIT_STATUSES = (429, 529)

_MAX_DELAY_S = 60.0
_POLL_S = 0.05


class RequestLimits(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How a run's model requests live with the provider's limits (not part of what is requested)."""

    #: Requests in flight at once over the whole run; UNSET: no ceiling but -j.
    max_concurrent: int | msgspec.UnsetType = msgspec.UNSET
    #: Times one completion waits out a rate-limited answer before it fails (`eval` and
    #: `record` default to 8; a model opened without limits fails at the first, as it always did).
    rate_limit_waits: int = 0
    #: The folder of the run's slot lock files (the runner makes it when there is a ceiling).
    slots: str = ""


def is_rate_limited(status: int, body: object) -> bool:
    if status in RATE_LIMIT_STATUSES:
        return True
    error = body.get("error", body) if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("type") == "overloaded_error"


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the provider asked to wait, or None when it did not say (or said it as a date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if 0 <= seconds <= _MAX_DELAY_S:
            return seconds
    return None


class RequestGate:
    """The slot and the waits of one model's requests; `sleep` is time.sleep, or nothing on replay."""

    def __init__(self, limits: RequestLimits, *, seed: int | None = 0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.limits = limits
        self._seed = seed
        self._sleep = sleep

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the run's `max_concurrent` slots while the block runs."""
        if self.limits.max_concurrent is msgspec.UNSET or not self.limits.slots:
            yield
            return
        folder = Path(self.limits.slots)
        files = [os.open(folder / f"slot-{i}", os.O_RDWR | os.O_CREAT, 0o600)
                 for i in range(self.limits.max_concurrent)]
        try:
            held = self._take(files)
            try:
                yield
            finally:
                fcntl.flock(held, fcntl.LOCK_UN)
        finally:
            for fd in files:
                os.close(fd)

    def _take(self, files: list[int]) -> int:
        while True:
            for fd in files:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    continue
            time.sleep(_POLL_S)  # a slot frees when another task's answer arrives

    def delay(self, asked: float | None, channel: str, turn: int, wait: int) -> float:
        """Seconds to wait before attempt `wait + 1` of a rate-limited completion."""
        base = asked if asked is not None else min(2.0 ** wait, _MAX_DELAY_S)
        key = f"{self._seed}:{channel}:{turn}:{wait}".encode()
        fraction = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2 ** 64
        return round(base * (1 + 0.25 * fraction), 3)  # never less than asked: jitter only adds

    def wait(self, seconds: float) -> None:
        self._sleep(seconds)
