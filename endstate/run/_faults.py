"""What a run does when the machinery fails under a task.

A task the machinery failed (see `endstate.sandbox._faults`) ends as
`infra_error`, with the cause in one line, never as a harness bug or a model
failure. It is then run again once the engine answers again, up to
`RetryPolicy.tries` runs in all, waiting longer before each; the retries are
counted on the task's result. Before its end state was read, from scratch (a fresh
sandbox, its work folder and transcript gone, a recording started over); after, the
attempt is sealed and only graded again (`_attempt.regrade`): its agent does not run
again and its model is not asked again, so a fault under grading buys no agent a
second try. Nothing else is retried: a model failure, a divergence and every grader
verdict stand as they came.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from endstate.agent import StopReason
from endstate.errors import EndstateError, UserError, WriteError
from endstate.run._results import RunOutcome, RunResult, TaskResult, attempt_stem, write_results

if TYPE_CHECKING:
    from endstate.sandbox import EngineWatch

__all__ = ["INFRA_ERROR", "RetryPolicy", "settle", "guarded", "save_results", "run_with_retries", "wait_for_engine",
           "disk_full", "sweep_run"]

INFRA_ERROR = RunOutcome.INFRA_ERROR


class RetryPolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How a task whose machinery failed is run again."""

    #: Runs in all of a task whose machinery failed (1: never rerun).
    tries: int = 3
    #: Seconds before the first rerun; each further one waits twice as long.
    backoff_s: float = 2.0
    #: How long to wait for the engine to answer again before giving the task up.
    engine_wait_s: float = 120.0


def settle(result: TaskResult, exc: BaseException | None, watch: EngineWatch | None,
           identity: tuple[int, int] | None) -> None:
    """Mark `result` an infra_error when the machinery failed under it: `exc` (what the
    task raised, if anything) is a machinery fault, or the engine went away or restarted
    since `identity` was taken. A model failure stays what it is."""
    if result.stop_reason == StopReason.MODEL_ERROR or result.outcome == INFRA_ERROR:
        return
    from endstate.sandbox import machinery_fault  # the docker SDK: loaded only once a task failed

    cause = machinery_fault(exc) if exc is not None else None
    if cause is None and watch is not None:
        restarted = identity is not None and watch.identity() != identity
        if restarted or exc is not None or result.outcome == RunOutcome.ERROR:
            cause = watch.fault_since(identity)
    if cause is not None:
        was = f" (it read: {result.outcome}{': ' + result.reason if result.reason else ''})"
        result.outcome, result.failing_grader, result.reason = INFRA_ERROR, "", cause + was[:300]


def guarded(run: Callable[[], None], result: TaskResult, watch: EngineWatch | None) -> TaskResult:
    """Call `run` (which fills in `result`); what it raises becomes the result's error, named
    as a user error, an endstate error, a harness bug or (`settle`) a fault of the machinery.
    Never raises past a task: the other tasks' results are never lost."""
    identity = watch.identity() if watch else None
    failure: BaseException | None = None
    try:
        run()
    except WriteError as exc:  # the run folder refused a write: a full disk is the machinery's (settle)
        result.outcome, result.reason, failure = RunOutcome.ERROR, str(exc), exc
    except UserError as exc:
        result.outcome, result.reason = RunOutcome.ERROR, str(exc)
    except EndstateError as exc:
        result.outcome, result.reason, failure = RunOutcome.ERROR, f"{type(exc).__name__}: {exc}", exc
    except Exception as exc:  # noqa: BLE001 - anything else is a bug of endstate's, or the machinery's
        result.outcome, result.reason, failure = RunOutcome.ERROR, f"harness bug: {type(exc).__name__}: {exc}", exc
    settle(result, failure, watch, identity)
    return result


def save_results(result: RunResult, out_dir: Path, *, last: bool) -> None:
    """Write the results so far. A full disk does not stop the run: the next task's
    write tries again, and only the last one must land."""
    try:
        write_results(result, out_dir)
    except WriteError as exc:
        if last:  # the file keeps its last good write; what it lacks is named in the one line
            done = ", ".join(f"{attempt_stem(t.task_id, t.attempt)} {t.outcome}" for t in result.tasks)
            raise WriteError(f"{exc} (results.json keeps its last write; finished: {done or 'no task'})") from None
        if not disk_full(out_dir):
            raise


def wait_for_engine(watch: EngineWatch | None, seconds: float, cancelled: threading.Event) -> bool:
    """Wait until the engine answers (True), or `seconds` pass or the run is cancelled (False)."""
    if watch is None:
        return True
    deadline = time.monotonic() + seconds
    pause = 0.5
    while not watch.answers(timeout=3.0):
        if cancelled.is_set() or time.monotonic() + pause > deadline:
            return False
        cancelled.wait(pause)
        pause = min(pause * 2, 5.0)
    return True


def run_with_retries(once: Callable[[int], TaskResult], policy: RetryPolicy, watch: EngineWatch | None,
                     cancelled: threading.Event, before_retry: Callable[[], None]) -> TaskResult:
    """Run `once(retry)` until it ends in anything but an infra_error, at most
    `policy.tries` times; between runs, back off, wait for the engine, and `before_retry`."""
    retry = 0
    while True:
        result = once(retry)
        if result.outcome != INFRA_ERROR or retry + 1 >= policy.tries or cancelled.is_set():
            break
        cancelled.wait(policy.backoff_s * 2 ** retry)
        if cancelled.is_set() or not wait_for_engine(watch, policy.engine_wait_s, cancelled):
            break
        before_retry()
        retry += 1
    result.infra_retries = retry
    return result


def disk_full(folder: os.PathLike[str] | str, spare: int = 1 << 20) -> str | None:
    """The machinery fault "disk full" when the file system holding `folder` has less than
    `spare` bytes left (what a process that could not write its result meets)."""
    try:
        status = os.statvfs(folder)
    except OSError:
        return None
    if status.f_bavail * status.f_frsize < spare:
        return f"the host's disk is full (the file system holding {folder})"
    return None


def sweep_run(run_id: str) -> list[str]:
    """Remove every container labelled with this run that is still there (its removal
    failed while the engine was away); returns their ids. Quiet when no engine answers."""
    from endstate.sandbox import remove_run_containers

    return remove_run_containers(run_id)
