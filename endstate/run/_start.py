"""Starting a run's results folder and adding to it, whichever executor runs the tasks.

`begin_run` writes the run file (or checks it, on `--resume`), keeps what a resumed
run keeps, removes what unfinished attempts left, and says which (task, attempt)
pairs are still to run; `add_result` records one finished attempt. The local runner
and the Ray driver both go through these two, so a run killed under one executor
resumes the same way under either.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from endstate.agent import StopReason
from endstate.run._config import RunConfig, settings_key
from endstate.run._faults import save_results
from endstate.run._recordmode import stale_recording
from endstate.run._results import RunCard, RunOutcome, RunResult, TaskResult, attempt_stem, write_results
from endstate.run._resume import discard_partial, run_key, start_run
from endstate.task import Task

__all__ = ["begin_run", "add_result"]


def begin_run(out_dir: Path, card: RunCard, config: RunConfig, tasks: list[Task], *, resume: bool,
              progress: Callable[[TaskResult], None], refused: dict[str, str] | None = None,
              only: Collection[tuple[str, int]] | None = None) -> tuple[RunResult, list[tuple[Task, int]]]:
    """The run's results so far (kept from the run it resumes, and `refused` tasks, each
    reported to `progress`) and the attempts still to run, limited to `only` if given.

    Raises UserError when a resume is refused (nothing to resume, or settings differ)."""
    refused = refused or {}
    kept = start_run(out_dir, run_key(card, settings_key(config)), resume=resume, rerun_errors=not config.keep_errors)
    result = RunResult(card, sorted(kept, key=lambda r: (r.task_id, r.attempt)))
    write_results(result, out_dir)  # the card is on disk before the first task starts
    finished = {(r.task_id, r.attempt) for r in kept}
    todo = [(t, k) for t in tasks for k in range(config.attempts)
            if (t.id, k) not in finished and t.id not in refused and (only is None or (t.id, k) in only)]
    for task, k in todo if resume else []:
        stem = attempt_stem(task.id, k)
        discard_partial(out_dir, stem, stale_recording(config, stem))
    for kept_result in result.tasks:
        progress(kept_result)
    for task in tasks:  # said up front, by name; the other tasks run
        if task.id in refused and (task.id, 0) not in finished:
            refused_result = TaskResult(task.id, task.manifest.category.value, outcome=RunOutcome.ERROR,
                                        reason=refused[task.id], stop_reason=StopReason.REFUSED)
            result.tasks.append(refused_result)
            progress(refused_result)
    if refused:
        result.tasks.sort(key=lambda r: (r.task_id, r.attempt))
        write_results(result, out_dir)
    return result, todo


def add_result(result: RunResult, task_result: TaskResult, out_dir: Path, *, last: bool) -> None:
    """Record one finished attempt and rewrite the results file (kill-safe: atomically)."""
    result.tasks.append(task_result)
    result.tasks.sort(key=lambda r: (r.task_id, r.attempt))
    save_results(result, out_dir, last=last)
