"""`endstate tasks adequacy`: can a task's graders tell a right fix from a wrong one?

`tasks check` proves the graders fail the fixture and pass one reference. Here the
reference's own code is turned into wrong fixes (mutants, `_mutants.py`), each graded
as an end state an agent left: sealed, then graded in a fresh grading sandbox with the
held-out tests staged, through the path `tasks check` grades hacks by. A mutant's
grading stops at its first failing grader (nothing after can make it pass). A mutant
that passes every grader survived: a wrong fix the task would score as right, unless it
behaves exactly as the reference does, which a person decides once and records in
`adequacy.toml` beside the task:

    [[equivalent]]
    mutant = "pkg/mod.py:12:8:Lt>LtE"
    reason = "n is never equal to the limit here: the loop stops one short of it"

A recorded mutant is not graded again (no test can kill a mutant that behaves as the
reference). A record naming a mutant no longer made is stale and reported, and so is a
[measured] table (what a run card shows, `_triage.py`) that is not what was counted.

Right fixes must pass: `solution/`, every `solutions/<name>/`, and rewrites of the
reference that keep its meaning (locals renamed, comparisons mirrored); one that fails
shows a grader that checks the text, not the behaviour.

The rows of one task share its sandbox (its image built once) and run `jobs` at a time.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec

from endstate.checks._check import grade_tree
from endstate.checks._mutants import file_diff, mutants_of, rewrites_of
from endstate.errors import EndstateError
from endstate.grading import INTEGRITY, Grader, Outcome
from endstate.sandbox import Tree
from endstate.task import ADEQUACY_FILE, Measured, Task, TaskSandbox, load_triage, task_sandbox

__all__ = ["MutantOutcome", "MutantRow", "RightFixRow", "TaskAdequacy", "adequacy_of", "adequacy_of_tasks", "triage_hint"]

class MutantOutcome(enum.StrEnum):
    """What grading made of a mutant of the solution."""

    KILLED = "killed"
    SURVIVED = "survived"
    #: Proven to leave the code's meaning unchanged: not counted.
    EQUIVALENT = "equivalent"
    ERROR = "error"


class MutantRow(msgspec.Struct):
    id: str
    outcome: MutantOutcome
    killed_by: str = ""
    diff: str = ""
    note: str = ""


class RightFixRow(msgspec.Struct):
    #: "solution", "solutions/<name>" or "rewrite:<id>"
    case: str
    #: The Outcome's value ("pass", "fail", "error"), as it is printed and written.
    outcome: str
    failing: list[str] = []
    diff: str = ""
    note: str = ""


class TaskAdequacy(msgspec.Struct):
    task_id: str
    mutants: list[MutantRow] = []
    right: list[RightFixRow] = []
    stale: list[str] = []
    #: What adequacy.toml's [measured] says when it is not what was counted ("" when it is, or is absent).
    recorded: str = ""
    error: str = ""
    wall_s: float = 0.0

    def count(self, outcome: MutantOutcome) -> int:
        return sum(1 for m in self.mutants if m.outcome == outcome)

    @property
    def kill_rate(self) -> float | None:
        """Killed over the mutants that are not equivalent; None when there are none."""
        judged = len(self.mutants) - self.count(MutantOutcome.EQUIVALENT)
        return self.count(MutantOutcome.KILLED) / judged if judged else None

    def measured(self) -> Measured:
        """The figures to record in adequacy.toml's [measured]."""
        return Measured(len(self.mutants), self.count(MutantOutcome.KILLED), self.count(MutantOutcome.EQUIVALENT))

    @property
    def ok(self) -> bool:
        return (not self.error and not self.stale and not self.recorded
                and all(r.outcome == Outcome.PASS for r in self.right)
                and all(m.outcome in (MutantOutcome.KILLED, MutantOutcome.EQUIVALENT) for m in self.mutants))


def _grade(task: Task, graders: list[Grader], fixture: Tree, holdout: Tree, tree: Tree, backend: str, image: str,
           where: TaskSandbox) -> tuple[Outcome, list[str], str]:
    """(outcome, failing graders, note) of `tree` graded as an end state, stopping at the first failure."""
    every = [g.short_name for g in graders] + [INTEGRITY]
    try:
        verdicts = grade_tree(task, graders, fixture, tree, holdout, backend, image, where=where,
                              until_caught_by=every)
    except EndstateError as exc:
        return Outcome.ERROR, [], str(exc)
    errors = [f"{n}: {r}" for n, o, r in verdicts if o is Outcome.ERROR]
    failing = [n for n, o, _ in verdicts if o is Outcome.FAIL]
    if errors:
        return Outcome.ERROR, failing, "; ".join(errors)
    if failing:
        return Outcome.FAIL, failing, "; ".join(r for n, o, r in verdicts if o is Outcome.FAIL)
    return Outcome.PASS, [], ""


def adequacy_of(task: Task, graders: list[Grader], *, backend: str, image: str, jobs: int = 1) -> TaskAdequacy:
    """Make the task's mutants and right fixes, grade them `jobs` at a time, and judge them."""
    started = time.monotonic()
    report = TaskAdequacy(task.id)
    try:
        triage = load_triage(task)
        equivalents = {entry.mutant: entry.reason for entry in triage.equivalent}
        fixture, holdout, solution = task.fixture(), task.holdout(), task.solution()
        alternatives = task.alternatives()
        where = task_sandbox(task, backend, image)
    except EndstateError as exc:
        report.error = str(exc)
        return report
    mutants = mutants_of(fixture, solution)
    made = {m.id for m in mutants}
    report.stale = sorted(set(equivalents) - made)
    right: list[tuple[str, Tree, str]] = [("solution", solution, "")]
    right += [(f"solutions/{name}", tree, "") for name, tree in alternatives.items()]
    right += [(f"rewrite:{r.id}", r.tree(solution), file_diff(r.path, solution[r.path].data, r.source))
              for r in rewrites_of(fixture, solution)]

    def grade(tree: Tree) -> tuple[Outcome, list[str], str]:
        return _grade(task, graders, fixture, holdout, tree, backend, image, where)

    to_grade = [m for m in mutants if m.id not in equivalents]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        right_runs = [pool.submit(grade, tree) for _, tree, _ in right]
        mutant_runs = {m.id: pool.submit(grade, m.tree(solution)) for m in to_grade}
        for (case, _, diff), run in zip(right, right_runs):
            outcome, failing, note = run.result()
            shown = diff if outcome is not Outcome.PASS else ""
            report.right.append(RightFixRow(case, outcome.value, failing, shown, note))
        for mutant in mutants:
            diff = file_diff(mutant.path, solution[mutant.path].data, mutant.source)
            if mutant.id in equivalents:
                report.mutants.append(MutantRow(mutant.id, MutantOutcome.EQUIVALENT, note=equivalents[mutant.id]))
                continue
            outcome, failing, note = mutant_runs[mutant.id].result()
            if outcome is Outcome.FAIL:
                report.mutants.append(MutantRow(mutant.id, MutantOutcome.KILLED, killed_by=failing[0]))
            elif outcome is Outcome.PASS:
                report.mutants.append(MutantRow(mutant.id, MutantOutcome.SURVIVED, diff=diff))
            else:
                report.mutants.append(MutantRow(mutant.id, MutantOutcome.ERROR, diff=diff, note=note))
    if triage.measured is not None and triage.measured != report.measured():
        report.recorded = triage.measured.line()
    if report.right and report.right[0].outcome != Outcome.PASS:
        report.error = "the reference itself does not pass: its mutants' kills say nothing (run `tasks check`)"
    report.wall_s = round(time.monotonic() - started, 2)
    return report


def adequacy_of_tasks(tasks: list[Task], graders: dict[str, list[Grader]], *, backend: str, image: str,
                      jobs: int = 1, progress: Callable[[TaskAdequacy], None] = lambda r: None) -> list[TaskAdequacy]:
    """Each task in id order, one after another (so each has a wall of its own), its rows `jobs` at a time."""
    reports = []
    for task in sorted(tasks, key=lambda t: t.id):
        reports.append(adequacy_of(task, graders[task.id], backend=backend, image=image, jobs=jobs))
        progress(reports[-1])
    return reports


def triage_hint(task_root: Path, mutant_id: str) -> str:
    """What to write in the task folder once a person has judged the survivor equivalent."""
    return (f"if it behaves exactly as the reference, record it in {task_root / ADEQUACY_FILE}: "
            f'[[equivalent]] mutant = "{mutant_id}" reason = "..."; else add the held-out test that kills it')
