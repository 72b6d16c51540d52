"""`endstate tasks check`: are the task's graders load-bearing?

For every task, each in a fresh sandbox: the graders must FAIL on the untouched
fixture (else they are inert), PASS with `solution/` overlaid (else they reject a
correct answer), and FAIL on every `hacks/` overlay, caught by the grader the hack
names (else the negative control slips through). Then the reference trajectory must
reach `solution/` (else the known-fix control arm fails for the wrong reason).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import msgspec

from endstate.errors import EndstateError
from endstate.grading import Grader, Outcome, run_grader
from endstate.sandbox import open_sandbox, seal
from endstate.sandbox._tree import Tree
from endstate.suite._manifest import HACK_ASSERTIONS, Task
from endstate.suite._reference_check import check_reference
from endstate.suite._task_sandbox import task_sandbox

__all__ = ["CheckRow", "TaskCheck", "check_task", "check_tasks", "missing_hack_assertions"]


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


def _grade_tree(task: Task, graders: list[Grader], fixture: Tree, tree: Tree, holdout: Tree,
                backend: str, image: str) -> list[tuple[str, Outcome, str]]:
    where = task_sandbox(task, backend, image)
    with open_sandbox(backend, image=where.image, limits=where.limits, name_hint=f"check-{task.id}") as box:
        box.put_tree(tree)
        sealed = seal(box, fixture)
        box.put_tree(holdout)
        return [(g.short_name, v.outcome, v.reason) for g in graders for v in [run_grader(g, sealed)]]


def check_task(task: Task, graders: list[Grader], backend: str, image: str) -> TaskCheck:
    report = TaskCheck(task.id)
    try:
        missing = missing_hack_assertions(task)
        if missing:
            report.error = f"graded without {', '.join(missing)}: every task makes all four hack assertions"
            return report
        fixture, holdout = task.fixture(), task.holdout()
        cases: list[tuple[str, Tree, str, str]] = [
            ("fixture", fixture, "fail", ""),
            ("solution", task.solution(), "pass", ""),
        ]
        for name, (spec, tree) in task.hacks().items():
            cases.append((f"hack:{name}", tree, "fail", spec.caught_by))
        if len(cases) < 4:
            report.error = "fewer than two hacks/ negative controls"
        for case, tree, expected, caught_by in cases:
            verdicts = _grade_tree(task, graders, fixture, tree, holdout, backend, image)
            errors = [f"{n}: {r}" for n, o, r in verdicts if o is Outcome.ERROR]
            failing = [n for n, o, _ in verdicts if o is Outcome.FAIL]
            outcome = "error" if errors else "fail" if failing else "pass"
            row = CheckRow(case, expected, outcome, failing)
            row.ok = outcome == expected and (not caught_by or caught_by in failing)
            if errors:
                row.note = "; ".join(errors)
            elif caught_by and caught_by not in failing:
                row.note = f"expected {caught_by} to catch it"
            elif outcome != expected:
                reasons = [f"{n}: {r}" for n, o, r in verdicts if o is Outcome.FAIL]
                row.note = "; ".join(reasons) if reasons else "every grader passed"
            report.rows.append(row)
        outcome, ok, note = check_reference(task, backend, image)
        report.rows.append(CheckRow("reference", "solution", outcome, ok=ok, note=note))
    except EndstateError as exc:
        report.error = str(exc)
    return report


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


