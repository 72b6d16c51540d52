"""One task's agent, in a process of its own.

Each agent gets its own process because vcrpy patches HTTP process-wide (two
cassettes in one process drop interactions) and because checkpoint tasks kill the
agent for real. The runner forks workers from a preloaded fork server
(`forked_main`); `python -m endstate.agent.worker JOB.json` runs a saved job by
hand, which is handy for debugging one task.

When the job names a kill point, the worker reports it after that tool call has
run and before its result is journaled (KILL_MARKER, on the runner's pipe or on
stdout), then waits to be SIGKILLed.

Secrets never reach the job file: its base URL has credentials replaced by a
placeholder, and the real one comes out of band (an argument through the fork
server's pipe, or BASE_URL_ENV for a job run by hand); API keys come from the
environment. The worker builds one Scrubber from them and applies it to
everything it writes: cassette, journal, transcript, outcome and its log.
An input error met here (a cassette that went bad after the runner checked it)
is one line in the log and the `input_error` stop reason, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import msgspec

from endstate.agent._policy import Policy
from endstate.agent._state import Counters, Guards, Journal
from endstate.agent._stop import StopReason
from endstate.cassettes import CassetteJob, Provenance, RunMode
from endstate.errors import UserError
from endstate.models import Scrubber
from endstate.sandbox import Healthcheck, Sandbox, SandboxHandle
from endstate.task import Budget

__all__ = ["AgentJob", "AgentOutcome", "KILL_MARKER", "cassette_session", "BASE_URL_ENV", "run_job", "main",
           "forked_main", "start_task"]

KILL_MARKER = "ENDSTATE-KILL-POINT"

#: Where a job run by hand finds its real base URL when the job file's is redacted.
BASE_URL_ENV = "ENDSTATE_BASE_URL"


class AgentJob(msgspec.Struct, frozen=True):
    task_id: str
    prompt: str
    sandbox: SandboxHandle
    model: str
    settings: dict[str, Any]
    budget: Budget
    journal: str
    transcript: str
    outcome: str
    base_url: str | None = None
    #: Permission rule tables (a task's own) and files (the user's), layered over the defaults.
    policy: list[dict[str, Any]] = []
    policy_files: list[str] = []
    guards: Guards = Guards()
    kill_at: int | None = None
    attempt: int = 0
    cassette: CassetteJob | None = None
    #: The fixture tree (msgpack), written into the sandbox by the worker before the agent
    #: starts, through the connection it opens anyway; only the first process of a task has it.
    fixture: str = ""
    #: A foreign agent's file (endstate.agents.AgentSpec as builtins); None runs endstate's own loop.
    agent: dict[str, Any] | None = None
    #: The run's request ceiling and rate-limit waits (endstate.models.RequestLimits as builtins).
    limits: dict[str, Any] = {}
    #: The task's healthcheck, run once the fixture is in (with it: the first process of a task only).
    healthcheck: Healthcheck | None = None


class AgentOutcome(msgspec.Struct):
    stop_reason: StopReason
    detail: str
    counters: Counters
    #: Set when replay met a request it had no answer for.
    divergence: str = ""
    unplayed: int = 0
    #: Wall seconds spent inside sandbox calls by this process.
    sandbox_s: float = 0.0
    #: Where the answers came from (replayed, live, forked), when a cassette was in use.
    provenance: Provenance | None = None


def _print_marker() -> None:
    print(KILL_MARKER, flush=True)


def run_job(job: AgentJob, *, at_kill_point: Callable[[], None] = _print_marker, base_url: str | None = None,
            scrubber: Scrubber | None = None) -> AgentOutcome:
    """Run the job's agent to its end. At a checkpoint task's kill point, call
    `at_kill_point` (which tells the runner) and wait to be killed.

    `base_url` is the real one when the job's is redacted; `scrubber` (default:
    built from it and the environment) cleans what is written."""
    from endstate.agent._loop import Agent, RunEnded
    from endstate.errors import ReplayDivergence
    from endstate.models import RequestLimits, RunSettings, open_model
    from endstate.sandbox import TimedSandbox, attach

    sandbox = TimedSandbox(attach(job.sandbox))
    if job.fixture:
        start_task(sandbox, job)
    settings = msgspec.convert(job.settings, RunSettings)
    base_url = base_url or job.base_url
    scrubber = scrubber or Scrubber.for_run(base_url, os.environ)
    journal = Journal(Path(job.journal), scrubber)

    def on_tool_done(calls: int) -> None:
        if job.kill_at is not None and job.attempt == 0 and calls == job.kill_at:
            at_kill_point()
            time.sleep(3600)  # the runner kills this process now

    session = cassette_session(job, scrubber)
    divergence = ""
    with session as tape:
        replay = job.cassette is not None and job.cassette.mode == RunMode.REPLAY
        # A replay asks no provider: the recording answers, so no key is needed (nor sent anywhere).
        model = open_model(job.model, settings=settings, base_url=base_url, api_key=_REPLAY_KEY if replay else None,
                           limits=msgspec.convert(job.limits, RequestLimits),
                           sleep=_no_sleep if replay else time.sleep)  # a replay has no provider to spare
        try:
            agent = Agent(model, sandbox, policy=Policy.load(*job.policy, *map(Path, job.policy_files)), budget=job.budget, journal=journal,
                          guards=job.guards, tool_choice=settings.tool_choice, on_tool_done=on_tool_done,
                          reconcile=job.kill_at is not None,
                          recorded_result=tape.recorded_tool_result if tape is not None else None)
            state, end = agent.run(job.prompt)
        except ReplayDivergence as exc:
            # Replay met a request it has no answer for: the harness or the recording changed.
            state, end, divergence = journal.read(), RunEnded(str(exc)), str(exc)
        finally:
            model.close()
    Path(job.transcript).write_bytes(msgspec.json.format(scrubber.json(state.messages), indent=1))
    outcome = AgentOutcome(end.stop_reason, end.detail, state.counters, sandbox_s=round(sandbox.seconds, 3))
    if tape is not None:
        outcome.divergence = tape.divergence or divergence
        outcome.unplayed = tape.unplayed()
        outcome.provenance = tape.provenance()
    return outcome


#: The key a replay's adapter holds: the SDK insists on one, and no request leaves the machine.
_REPLAY_KEY = "replay-needs-no-key"


def _no_sleep(seconds: float) -> None:
    pass


def forked_main(job_path: str, log_path: str, conn: Connection, base_url: str | None = None,
                run: Callable[..., AgentOutcome] | None = None) -> None:
    """Entry point of a worker forked from the runner's preloaded fork server: the same
    as `main`, with output to the task's log and the kill point reported on `conn`.
    `base_url` is the real base URL when the job file holds a redacted one."""
    with open(log_path, "ab", buffering=0) as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    job = msgspec.json.decode(Path(job_path).read_bytes(), type=AgentJob)
    scrubber = Scrubber.for_run(base_url or job.base_url, os.environ)
    sys.stdout = _ScrubbedLines(open(1, "w", buffering=1, closefd=False), scrubber)
    sys.stderr = _ScrubbedLines(open(2, "w", buffering=1, closefd=False), scrubber)
    main([job_path], at_kill_point=lambda: conn.send(KILL_MARKER), base_url=base_url, run=run)


class _ScrubbedLines:
    """A text stream that writes whole lines, each scrubbed (a secret split across two
    `write` calls is still caught); what is left of a line goes out on flush."""

    def __init__(self, stream: Any, scrubber: Scrubber) -> None:
        self._stream = stream
        self._scrubber = scrubber
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        lines, newline, self._pending = self._pending.rpartition("\n")
        if newline:
            self._stream.write(self._scrubber.text(lines + newline))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._scrubber.text(self._pending))
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def start_task(sandbox: Sandbox, job: AgentJob) -> None:
    """Put the fixture into the task's new sandbox and wait for its healthcheck (UserError when it never
    passes): what comes before the agent's first step, for every agent."""
    from endstate.sandbox import Tree, healthy

    sandbox.ready()
    sandbox.put_tree(msgspec.msgpack.decode(Path(job.fixture).read_bytes(), type=Tree))
    if job.healthcheck is not None:
        healthy(sandbox, job.healthcheck)


def cassette_session(job: AgentJob, scrubber: Scrubber):
    if job.cassette is None:
        return contextlib.nullcontext(None)
    from endstate.cassettes import open_session

    return open_session(job.cassette, task_id=job.task_id, state_dir=Path(job.journal).parent,
                        resumed=job.attempt > 0, scrubber=scrubber)


def main(argv: list[str] | None = None, *, at_kill_point: Callable[[], None] = _print_marker,
         base_url: str | None = None, run: Callable[..., AgentOutcome] | None = None) -> int:
    """Run a saved job; `run` replaces endstate's own loop (`run_job`), for a foreign agent."""
    argv = sys.argv[1:] if argv is None else argv
    job = msgspec.json.decode(Path(argv[0]).read_bytes(), type=AgentJob)
    base_url = base_url or os.environ.get(BASE_URL_ENV) or job.base_url
    scrubber = Scrubber.for_run(base_url, os.environ)
    try:
        if job.agent is not None and run is None:
            raise UserError(f"job {argv[0]} is for the foreign agent {job.agent.get('name')}: "
                            "run it with `python -m endstate.agents.worker`")
        outcome = (run or run_job)(job, at_kill_point=at_kill_point, base_url=base_url, scrubber=scrubber)
    except UserError as exc:  # bad input, found late: one line, no traceback
        print(f"endstate: error: {exc}", flush=True)
        outcome = _failed(job, StopReason.INPUT_ERROR, str(exc))
    except Exception as exc:  # reported as the task's ERROR (or the machinery's); the runner carries on
        from endstate.sandbox import machinery_fault

        traceback.print_exc()
        cause = machinery_fault(exc)
        outcome = _failed(job, StopReason.INFRA_ERROR, cause) if cause else _failed(job, StopReason.HARNESS_ERROR,
                                                                             f"{type(exc).__name__}: {exc}")
    Path(job.outcome).write_bytes(scrubber.json(outcome))
    sys.stdout.flush()
    sys.stderr.flush()
    return 0


def _failed(job: AgentJob, stop_reason: StopReason, detail: str) -> AgentOutcome:
    state = Journal(Path(job.journal)).read()
    return AgentOutcome(stop_reason, detail, state.counters if state else Counters())


