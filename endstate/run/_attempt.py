"""What one attempt at a task holds: what it starts from, and what it keeps once sealed.

An attempt whose end state was read is sealed: if the machinery then fails under its
grading, the rerun grades that snapshot again in a fresh grading sandbox (`regrade`) and
neither runs the agent nor asks the model again (see `_faults`).
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any, NamedTuple

from endstate.agent import normalise_output
from endstate.grading import Grader, RunVerdict, judge, seal_overlay
from endstate.guards import Guards
from endstate.run._enddiff import end_state_diff
from endstate.run._results import TaskResult, write_atomically
from endstate.run._system import give_system
from endstate.sandbox import VCS_DIRS, Sandbox, SealedSandbox, SystemChange, Tree, tar_to_tree, tree_to_tar
from endstate.task import Task, TaskSandbox

__all__ = ["Prepared", "SealedAttempt", "keep_end_state", "leaked_history", "read_end_state", "regrade", "write_diff"]


class Prepared(NamedTuple):
    """A task's agent sandbox, made before the task starts, and what goes into it. The task's
    first agent process writes the fixture in (see `AgentJob.fixture`): it holds a connection
    into the sandbox anyway, and the run's would cost an engine call."""

    fixture: Tree
    holdout: Tree
    where: TaskSandbox
    live: Sandbox


#: The result's fields the agent's part sets, which a regraded attempt keeps.
_AGENT_FIELDS = ("stop_reason", "counters", "unplayed", "provenance", "sandbox_s", "agent_s")


class SealedAttempt(NamedTuple):
    """An attempt whose end state was read: what grading it again needs, and what its agent's
    part wrote into the result. Kept in memory while the attempt runs, never on disk."""

    raw: Tree
    fixture: Tree
    holdout: Tree
    #: The task's sandbox (its image and limits), for a fresh grading sandbox.
    where: TaskSandbox
    agent: dict[str, Any]
    #: What the agent changed outside /workspace, for a task with `[seal] paths`.
    change: SystemChange | None = None

    @classmethod
    def of(cls, raw: Tree, prepared: Prepared, result: TaskResult, change: SystemChange | None = None) -> SealedAttempt:
        return cls(raw, prepared.fixture, prepared.holdout, prepared.where,
                   {name: getattr(result, name) for name in _AGENT_FIELDS}, change)


def write_diff(path: Path, sealed: SealedSandbox, system: str = "") -> None:
    """The end state's diff against the fixture (and `system`: what was sealed outside /workspace),
    where the run folder keeps it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(end_state_diff(sealed) + system)


def keep_end_state(path: Path, raw: Tree) -> None:
    """The sealed end state, as read, where the run folder keeps it for `endstate regrade`
    (a fixed-time tar, gzipped without a name or time: two identical runs write the same bytes)."""
    write_atomically(path, gzip.compress(tree_to_tar(raw), mtime=0))  # a full disk leaves no part of it


def read_end_state(path: Path) -> Tree:
    """An end state `keep_end_state` kept."""
    return tar_to_tree(gzip.decompress(path.read_bytes()))


def regrade(held: SealedAttempt, graders: list[Grader], grading: Sandbox, guards: Guards, result: TaskResult,
            requires: Any, diff: Path) -> RunVerdict:
    """The sealed end state, judged again in `grading` (a fresh grading sandbox); `result` gets
    back what the agent's part had written into it, and the tree's hash; its diff is written
    (again) to `diff`."""
    for name, value in held.agent.items():
        setattr(result, name, value)
    state = seal_overlay(held.raw, held.fixture, grading, guards)
    system = give_system(held.change, grading, state)
    result.tree_hash = state.sealed.tree_hash
    write_diff(diff, state.sealed, system)
    return judge(state, held.holdout, graders, guards, requires=requires, counters=result.counters,
                 normalise=normalise_output)


def leaked_history(task: Task, sealed_paths: list[str]) -> list[str]:
    """Files of the fixture's own VCS folders that are in the end state."""
    fixture = task.root / "fixture"
    history = {
        path.relative_to(fixture).as_posix()
        for vcs in VCS_DIRS for folder in fixture.rglob(vcs) if folder.is_dir()
        for path in folder.rglob("*") if path.is_file()
    }
    return sorted(history.intersection(sealed_paths))
