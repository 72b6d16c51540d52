"""A task's healthcheck, tried as Docker's HEALTHCHECK (and Harbor) try one: failures in the start
period do not count and are retried at its start interval; after it, `retries` failures in a row end
it with one line naming the command, the count and its last words. The clock here is a fake one."""

from __future__ import annotations

import pytest

from endstate.errors import UserError
from endstate.sandbox import Healthcheck, wait_healthy


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _answers(*codes: int):
    asked = []

    def run(command: str, timeout: float) -> tuple[int, str]:
        asked.append((command, timeout))
        return codes[len(asked) - 1], f"try {len(asked)}\n"

    return run, asked


def test_the_first_pass_ends_it_and_failures_in_the_start_period_do_not_count():
    clock = Clock()
    check = Healthcheck("curl -sf localhost", interval_sec=2, timeout_sec=7, start_period_sec=10,
                        start_interval_sec=3, retries=2)
    run, asked = _answers(1, 1, 1, 1, 0)
    assert wait_healthy(check, run, sleep=clock.sleep, clock=clock) == 5
    # 0, 3, 6, 9: in the start period (3 s apart, not counted); 12: the first that counts would be, and it passes.
    assert clock.slept == [3, 3, 3, 3] and asked == [("curl -sf localhost", 7)] * 5


def test_retries_failures_in_a_row_after_the_start_period_end_it_in_one_line():
    clock = Clock()
    run, _ = _answers(1, 1, 1, 1)
    with pytest.raises(UserError) as caught:
        wait_healthy(Healthcheck("false", interval_sec=1, retries=3), run, sleep=clock.sleep, clock=clock)
    assert str(caught.value) == ("the task's healthcheck `false` never passed: it failed 3 time(s) in a row after its "
                                 "start period of 0 s (last: exit 1, try 3): the task's environment is not ready, "
                                 "before the agent did anything")
    assert clock.slept == [1, 1]


def test_docker_healthchecks_defaults_and_bounds():
    check = Healthcheck("true")
    assert (check.interval_sec, check.timeout_sec, check.start_period_sec, check.start_interval_sec,
            check.retries) == (5.0, 30.0, 0.0, 5.0, 3)
    import msgspec

    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"command": "true", "retries": 0}, Healthcheck)
