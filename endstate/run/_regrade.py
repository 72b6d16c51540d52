"""Grading an end state outside a run: a given tree (`endstate grade`), or a run's kept end
states again with the tasks as they are now (`endstate regrade`).

Both take the runner's grading path as it is: a fresh grading sandbox from the task's
image, `seal_overlay`, then `judge` (held-out tests staged, every grader, the end-state
checks). Nothing here runs an agent or asks a model.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import msgspec

from endstate.agent import normalise_output
from endstate.errors import UserError
from endstate.grading import Outcome, RunVerdict, hack_fired, judge, prepare_grading_sandbox, seal_overlay
from endstate.guards import Guards
from endstate.run._attempt import read_end_state, write_diff
from endstate.run._config import task_pack_hash
from endstate.run._folder import RunFolder
from endstate.run._results import (
    GraderVerdict,
    RunOutcome,
    RunResult,
    TaskResult,
    attempt_stem,
    read_results,
    write_results,
)
from endstate.run._runner import resolve_graders
from endstate.sandbox import DEFAULT_IMAGE, Tree, load_dir
from endstate.task import Requires, Task, agent_trees, load_suite, run_task_hash, task_sandbox

__all__ = ["grade_tree", "regrade_run"]


def _judge(task: Task, tree: Tree, backend: str, image: str, *, impossible: bool = False,
           requires: Requires | None = None, counters: object = None, diff: Path | None = None) -> RunVerdict:
    """`tree` sealed into a fresh grading sandbox of `task` and judged there (`diff`: where its diff goes)."""
    fixture, holdout = agent_trees(task, prune_vcs=True, impossible=impossible)
    graders = resolve_graders(task)
    where = task_sandbox(task, backend, image)
    box = prepare_grading_sandbox(backend, where.image, where.limits, task.id)
    try:
        state = seal_overlay(tree, fixture, box, Guards())
        if diff is not None:
            write_diff(diff, state.sealed)
        return judge(state, holdout, graders, Guards(), requires=requires or Requires(), counters=counters,
                     normalise=normalise_output)
    finally:
        box.close()


def grade_tree(task: Task, tree_dir: Path, backend: str = "docker", image: str = DEFAULT_IMAGE) -> RunVerdict:
    """The verdict on `tree_dir` as an end state of `task` (its /workspace as the agent left it).
    No run, so no `requires` bounds: those are on what a run did, not on the tree."""
    if task.manifest.seal.paths:
        raise UserError(f"task {task.id} seals files outside /workspace ([seal] paths in task.toml): a --tree "
                        "holds /workspace only, so grade it with `endstate eval`")
    if not tree_dir.is_dir():
        raise UserError(f"--tree {tree_dir}: no such folder (pass the end state's workspace folder)")
    return _judge(task, load_dir(tree_dir, prune_vcs=False, what=f"--tree {tree_dir}"), backend, image)


def _regraded(old: TaskResult, task: Task, run: RunFolder, new: RunFolder, backend: str, image: str,
              impossible: bool) -> TaskResult:
    stem = attempt_stem(old.task_id, old.attempt)
    verdict = _judge(task, read_end_state(run.end_state(stem)), backend, image, impossible=impossible,
                     requires=task.manifest.requires, counters=old.counters, diff=new.diff(stem))
    return msgspec.structs.replace(
        old, outcome=RunOutcome(verdict.outcome), failing_grader=verdict.failing_grader, reason=verdict.reason,
        verdicts=[GraderVerdict(n, v.outcome.value, v.reason) for n, v in verdict.verdicts],
        requires_violations=verdict.requires_violations, task_hash=run_task_hash(task, impossible),
        hack=hack_fired(verdict.verdicts, impossible=impossible, passed=verdict.outcome is Outcome.PASS))


def regrade_run(run_dir: Path, suite: Path, out: Path, *, log: Callable[[str], None] = lambda line: None) -> RunResult:
    """Every kept end state of the run in `run_dir` graded again with the tasks of `suite` as
    they are now, written as a new run in `out`. An attempt that left no end state (a
    divergence, an error before sealing) keeps its result; each regraded one names the task
    hash its verdict used, and the card the run it regrades."""
    run, new = RunFolder(run_dir), RunFolder(out)
    try:
        old = read_results(run_dir)
    except FileNotFoundError:
        raise UserError(f"{run_dir}: no results.json there (pass a run folder written by `endstate eval`)") from None
    tasks, errors = load_suite(suite, only=sorted({t.task_id for t in old.tasks}))
    if errors:
        raise UserError(str(errors[0]))
    by_id = {task.id: task for task in tasks}
    impossible = old.card.impossible is True
    backend, image = old.card.sandbox_backend or "docker", old.card.image or DEFAULT_IMAGE
    results = []
    for result in old.tasks:
        stem = attempt_stem(result.task_id, result.attempt)
        task = by_id.get(result.task_id)
        if task is None:
            raise UserError(f"task {result.task_id} of {run_dir} is not in --suite {suite}: pass the suite the run ran")
        for kept in (run.transcript(stem), run.end_state(stem)):
            if kept.is_file():
                target = new.root / kept.relative_to(run.root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(kept, target)
        if not run.end_state(stem).is_file() or task.manifest.seal.paths:
            why = "its [seal] paths lie outside /workspace" if task.manifest.seal.paths else "the run kept no end state"
            log(f"{stem}: {result.outcome}, kept as it was ({why})")
            results.append(result)
            continue
        results.append(regraded := _regraded(result, task, run, new, backend, image, impossible))
        log(f"{stem}: {regraded.outcome}" + ("" if regraded.outcome == result.outcome else f" (was {result.outcome})"))
    old_hash = old.card.tasks_hash if isinstance(old.card.tasks_hash, str) and old.card.tasks_hash \
        else old.card.task_pack_hash
    alone = task_pack_hash(tasks, old.card.task_images or None)
    foreign = old.card.agent not in ("", "endstate")
    pack = task_pack_hash(tasks, old.card.task_images or None, old.card.agent) if foreign else alone
    card = msgspec.structs.replace(old.card, task_pack_hash=pack, tasks_hash=alone if foreign else old.card.tasks_hash,
                                   regrade_of=old_hash)
    result = RunResult(card, results)
    write_results(result, out)
    return result
