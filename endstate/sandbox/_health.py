"""A task's healthcheck: a command run in the agent's container once it has started and its files are
in, until it exits 0, before the agent does anything (Harbor's `[environment.healthcheck]`, with
Docker HEALTHCHECK's options and defaults). A task's image often uses it to start or wait for a
service the agent works against.

    [sandbox.healthcheck]
    command = "curl -sf http://127.0.0.1:8000/health"
    interval_sec = 2.0
    retries = 15

During `start_period_sec` a failure does not count, and the next try is `start_interval_sec` later;
after it, `retries` failures in a row end it: the task's environment never became ready, which is
the task's fault (an error of the run, never the agent's FAIL). It runs as the agent's commands do
(the agent's user, in the workspace), so what it starts is the agent's to leave running.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Annotated

import msgspec

from endstate.errors import UserError
from endstate.sandbox._base import Sandbox

__all__ = ["Healthcheck", "healthy", "wait_healthy"]

_Positive = Annotated[float, msgspec.Meta(gt=0)]


class Healthcheck(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """`[sandbox.healthcheck]` (see the module docstring)."""

    command: str
    interval_sec: _Positive = 5.0
    timeout_sec: _Positive = 30.0
    start_period_sec: Annotated[float, msgspec.Meta(ge=0)] = 0.0
    start_interval_sec: _Positive = 5.0
    retries: Annotated[int, msgspec.Meta(gt=0)] = 3


def wait_healthy(check: Healthcheck, run: Callable[[str, float], tuple[int, str]], *,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> int:
    """Run `check.command` (`run(command, timeout)` -> exit status and output) until it exits 0; return
    how many tries that took. UserError in one line when it never does."""
    start_period_end = clock() + check.start_period_sec
    tries = failures = 0
    while True:
        code, said = run(check.command, check.timeout_sec)
        tries += 1
        if code == 0:
            return tries
        if clock() < start_period_end:
            sleep(check.start_interval_sec)
            continue
        failures += 1
        if failures >= check.retries:
            last = said.strip().splitlines()[-1:] or ["(nothing)"]
            raise UserError(f"the task's healthcheck `{check.command}` never passed: it failed {failures} time(s) in "
                            f"a row after its start period of {check.start_period_sec:g} s (last: exit {code}, "
                            f"{last[0][:200]}): the task's environment is not ready, before the agent did anything")
        sleep(check.interval_sec)


def healthy(box: Sandbox, check: Healthcheck) -> int:
    """`wait_healthy` in `box`, each try a command of the agent's. Its output goes through a file: as
    with Harbor's `docker exec`, a try ends when its shell does, though a service it started in the
    background holds what it was given as output (the agent's own commands wait for that to close)."""
    def run(command: str, timeout: float) -> tuple[int, str]:
        wrapped = (f'said=$(mktemp) && {{ bash -c {shlex.quote(command)} </dev/null >"$said" 2>&1; status=$?; '
                   'cat "$said"; rm -f "$said"; exit $status; }')
        ran = box.exec(wrapped, timeout=timeout)
        return (124 if ran.timed_out else ran.exit_code), ran.stdout + ran.stderr

    return wait_healthy(check, run)
