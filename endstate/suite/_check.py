"""`endstate tasks check`: are the task's graders load-bearing?

For every task, each case graded the way a run is (sealed, then graded in a fresh
grading sandbox with the held-out tests staged): the graders must FAIL on the
untouched fixture (else they are inert), PASS with `solution/` overlaid (else they
reject a correct answer), and FAIL on every `hacks/` negative control, caught by
one of the graders the hack names (else it slips through). Overlay hacks are graded
as trees; live hacks (`trajectory.toml`) are played by the scripted arm in a real
agent sandbox, exactly like a run. Then the reference trajectory must reach `solution/`
(else the known-fix control arm fails for the wrong reason).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec

from endstate.agent._state import Guards
from endstate.errors import EndstateError
from endstate.grading import Grader, Outcome, grade, prepare_grading_sandbox, seal_overlay, stage_holdout
from endstate.sandbox._tree import Tree
from endstate.suite._manifest import HACK_ASSERTIONS, Hack, Task
from endstate.suite._reference_check import check_reference
from endstate.suite._task_sandbox import task_sandbox

__all__ = ["CheckRow", "TaskCheck", "check_task", "check_tasks", "missing_hack_assertions", "grade_tree"]


class CheckRow(msgspec.Struct):
    #: "fixture", "solution" or "hack:<name>"
    case: str
    expected: str
    outcome: str
    failing: list[str] = []
    ok: bool = False
    note: str = ""


class TaskCheck(msgspec.Struct):
    task_id: str
    rows: list[CheckRow] = []
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.rows) and all(r.ok for r in self.rows)


def missing_hack_assertions(task: Task) -> list[str]:
    """Built-in hack assertions a task's graders leave out."""
    used = {spec.name.replace(":", ".").rsplit(".", 1)[-1] for spec in task.manifest.graders}
    return [name for name in HACK_ASSERTIONS if name not in used]


def grade_tree(task: Task, graders: list[Grader], fixture: Tree, tree: Tree, holdout: Tree,
               backend: str, image: str, guards: Guards = Guards()) -> list[tuple[str, Outcome, str]]:
    """Grade `tree` as if an agent had left it: sealed, then graded in a fresh sandbox."""
    from endstate.suite._runner import grading_guards_of

    grading_guards = grading_guards_of(guards)
    where = task_sandbox(task, backend, image)
    with prepare_grading_sandbox(backend, where.image, where.limits, f"check-{task.id}") as box:
        sealed = seal_overlay(tree, fixture, box, grading_guards)
        stage_holdout(sealed, holdout)
        return [(n, v.outcome, v.reason) for n, v in grade(sealed, graders, grading_guards)]


def play_live_hack(task: Task, hack: Hack, backend: str, image: str,
                   guards: Guards = Guards()) -> list[tuple[str, Outcome, str]]:
    """Play a live hack's trajectory through the scripted arm, as a real run; its verdicts."""
    from endstate.suite._runner import RunConfig, run_suite

    config = RunConfig(model=f"scripted/hack.{hack.name}", sandbox=backend, image=image, guards=guards)
    with tempfile.TemporaryDirectory(prefix=f"endstate-hack-{task.id}-") as out:
        result = run_suite([task], config, Path(out), suite_root=task.root.parent).tasks[0]
    if not result.verdicts:  # the run never reached grading
        outcome = Outcome.ERROR if result.outcome in ("error", "divergence") else Outcome.FAIL
        return [(result.failing_grader or "run", outcome, result.reason)]
    return [(v.grader, Outcome(v.outcome), v.reason) for v in result.verdicts]


def check_task(task: Task, graders: list[Grader], backend: str, image: str) -> TaskCheck:
    report = TaskCheck(task.id)
    try:
        missing = missing_hack_assertions(task)
        if missing:
            report.error = f"graded without {', '.join(missing)}: every task makes all four hack assertions"
            return report
        fixture, holdout = task.fixture(), task.holdout()
        hacks = task.hacks()
        cases: list[tuple[str, Tree | Hack, str, list[str]]] = [
            ("fixture", fixture, "fail", []),
            ("solution", task.solution(), "pass", []),
        ]
        for name, hack in hacks.items():
            cases.append((f"hack:{name}", hack, "fail", hack.spec.catchers()))
        if len(hacks) < 2:
            report.error = "fewer than two hacks/ negative controls"
        for case, subject, expected, caught_by in cases:
            if isinstance(subject, Hack) and subject.live:
                verdicts = play_live_hack(task, subject, backend, image)
            else:
                tree = subject.tree if isinstance(subject, Hack) else subject
                verdicts = grade_tree(task, graders, fixture, tree, holdout, backend, image)
            report.rows.append(_row(case, expected, caught_by, verdicts))
        outcome, ok, note = check_reference(task, backend, image)
        report.rows.append(CheckRow("reference", "solution", outcome, ok=ok, note=note))
    except EndstateError as exc:
        report.error = str(exc)
    return report


def _row(case: str, expected: str, caught_by: list[str], verdicts: list[tuple[str, Outcome, str]]) -> CheckRow:
    errors = [f"{n}: {r}" for n, o, r in verdicts if o is Outcome.ERROR]
    failing = [n for n, o, _ in verdicts if o is Outcome.FAIL]
    outcome = "error" if errors else "fail" if failing else "pass"
    row = CheckRow(case, expected, outcome, failing)
    caught = not caught_by or any(name in failing for name in caught_by)
    row.ok = outcome == expected and caught
    if errors:
        row.note = "; ".join(errors)
    elif not caught:
        row.note = (f"expected {' or '.join(caught_by)} to catch it; failing: {', '.join(failing) or 'none'}; "
                    + "; ".join(f"{n}: {r}" for n, o, r in verdicts if o is Outcome.FAIL))
    elif outcome != expected:
        reasons = [f"{n}: {r}" for n, o, r in verdicts if o is Outcome.FAIL]
        row.note = "; ".join(reasons) if reasons else "every grader passed"
    return row


def check_tasks(tasks: list[Task], graders: dict[str, list[Grader]], *, backend: str, image: str,
                jobs: int = 1, progress: Callable[[TaskCheck], None] = lambda c: None) -> list[TaskCheck]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(check_task, t, graders[t.id], backend, image) for t in sorted(tasks, key=lambda t: t.id)]
        reports = []
        for future in futures:
            report = future.result()
            progress(report)
            reports.append(report)
    return reports
