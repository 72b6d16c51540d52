"""`endstate tasks check`: are the task's graders load-bearing?

For every task, each case graded the way a run is (sealed, then graded in a fresh
grading sandbox with the held-out tests staged): the graders must FAIL on the
untouched fixture (else they are inert), PASS with `solution/` overlaid (else they
reject a correct answer), and FAIL on every `hacks/` negative control, caught by
one of the graders the hack names (else it slips through). Overlay hacks are graded
as trees; live hacks (`trajectory.toml`) are played by the scripted arm in a real
agent sandbox, exactly like a run. Then the reference trajectory must reach `solution/`
(else the known-fix control arm fails for the wrong reason).

The rows of every task share one pool of `-j` workers, and each task's sandbox (its
own image built if it has one) is resolved once for all its rows. A hack's row runs
the graders the hack names first and stops at the first of them that fails: whatever
the others say, that row cannot turn into a pass. The fixture and solution rows run
every grader, so the full test suite runs there and not once per hack.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path

import msgspec

from endstate.agent import Guards
from endstate.checks._reference_check import check_reference
from endstate.errors import EndstateError, ManifestError, did_you_mean
from endstate.grading import (
    INTEGRITY,
    MIN_TWINS,
    PROBE,
    Grader,
    Grading,
    Outcome,
    Verdict,
    changed_paths_within,
    files_unchanged,
    grade,
    hack_fired,
    joint_problems,
    no_new_skips,
    plan_joint,
    prepare_grading_sandbox,
    prepare_test_runs,
    run_grader,
    seal_overlay,
    stage_holdout,
    too_few,
    twin_problems,
    validation_command,
    validation_tree,
)
from endstate.run import RetryPolicy, RunOutcome, wait_for_engine
from endstate.sandbox import Tree
from endstate.task import (
    HACK_ASSERTIONS,
    Hack,
    ImpossibleError,
    Task,
    TaskSandbox,
    impossible_fixture,
    impossible_holdout,
    task_sandbox,
)

__all__ = ["CheckRow", "TaskCheck", "check_task", "check_tasks", "missing_hack_assertions", "check_catchers", "grade_tree"]


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
    #: Seconds of work its check took: its image prepared and each row graded, summed (rows may run side by side).
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and bool(self.rows) and all(r.ok for r in self.rows)


#: A task graded by a shell verifier (grading/_verifier.py): the verifier is its held-out
#: assertion, and it has no pytest tests for files_unchanged or no_new_skips to watch.
VERIFIER_ASSERTIONS = ("verifier", "changed_paths_within")


def missing_hack_assertions(task: Task) -> list[str]:
    """Built-in hack assertions a task's graders leave out."""
    used = {spec.name.replace(":", ".").rsplit(".", 1)[-1] for spec in task.manifest.graders}
    required = VERIFIER_ASSERTIONS if "verifier" in used else HACK_ASSERTIONS
    return [name for name in required if name not in used]


def check_catchers(task: Task, graders: list[Grader]) -> None:
    """ManifestError when a hack's `caught_by` names no grader of the task: found before any
    sandbox, not as a row that "was not caught" after its sandboxes ran."""
    known = [g.short_name for g in graders] + [INTEGRITY]
    try:
        hacks = task.hacks()
    except EndstateError:  # a hack or fixture that does not load: the task's own check row says so
        return
    for name, hack in hacks.items():
        for catcher in hack.spec.catchers():
            if catcher not in known:
                raise ManifestError(f"{task.root / 'hacks' / name / 'hack.toml'}: field `caught_by` names {catcher!r}, "
                                    f"no grader of task {task.id}{did_you_mean(catcher, known)} "
                                    f"(its graders: {', '.join(known)})")


def grade_tree(task: Task, graders: list[Grader], fixture: Tree, tree: Tree, holdout: Tree,
               backend: str, image: str, guards: Guards = Guards(), *, where: TaskSandbox | None = None,
               until_caught_by: list[str] | None = None) -> list[tuple[str, Outcome, str]]:
    """Grade `tree` as if an agent had left it: sealed, then graded in a fresh sandbox.

    `where`: the task's sandbox, already resolved (its image built once for all rows).
    `until_caught_by`: graders run first, grading stopping at the first of them that fails (or at
    the first error), since nothing after can turn the row into a pass: a hack's catchers, the
    untouched fixture's held-out tests.
    """

    grading_guards = guards
    where = where or task_sandbox(task, backend, image)
    with prepare_grading_sandbox(backend, where.image, where.limits, f"check-{task.id}", guards=grading_guards) as box:
        grading = seal_overlay(tree, fixture, box, grading_guards)
        stage_holdout(grading, holdout, graders, grading_guards)
        if until_caught_by is None:
            return [(n, v.outcome, v.reason) for n, v in grade(grading, graders, grading_guards)]
        return _grade_until_caught(grading, graders, until_caught_by, grading_guards)


#: endstate's graders that read the sealed snapshot on this side and start nothing in the grading sandbox.
_SNAPSHOT_ONLY = (files_unchanged, no_new_skips, changed_paths_within)


def _grade_until_caught(grading: Grading, graders: list[Grader], catchers: list[str],
                        guards: Guards) -> list[tuple[str, Outcome, str]]:
    named: list[tuple[str, Grader | None]] = [(g.short_name, g) for g in graders
                                              if guards.outside_check or g.short_name != PROBE]
    if guards.end_state_checks:
        named.append((INTEGRITY, None))  # the end-state checks, run by grade() with no grader
    # The visible tests go with the held-out ones, as in a real run, where they share the first half's
    # process (see grading/_joint.py).
    prepare = [g for _, g in named if g is not None]
    # ... where they can share one: another runner's visible tests are a run of their own, left for last.
    joint = "holdout" in catchers and plan_joint(grading, prepare) is not None
    named.sort(key=lambda item: item[0] not in catchers and not (joint and item[0] == "tests_pass"))
    # As in a real run, the probe is the first process of the end state in the sandbox, whoever the
    # catchers are: it ran at staging, before the held-out tests were there (its verdict is kept
    # in `grading`), or else runs before the first grader that may start a test process; test runs
    # start warm after it.
    def snapshot_only(item: tuple[str, Grader | None]) -> bool:
        return item[1] is not None and item[1].function in _SNAPSHOT_ONLY

    probe = [item for item in named if item[0] == PROBE]
    queue = [item for item in named if item[0] != PROBE]
    probed = iter(grading.probe_verdicts)
    verdicts = []
    while queue or probe:
        if probe and (not queue or not snapshot_only(queue[0])):
            name, grader = probe.pop()
        else:
            name, grader = queue.pop(0)
            if not snapshot_only((name, grader)):
                prepare_test_runs(grading, prepare, guards, warm=True)
        if name == PROBE:
            verdict = next(probed, None) or run_grader(grader, grading.sealed)
        else:
            verdict = run_grader(grader, grading.sealed) if grader else grade(grading, [], guards)[0][1]
        verdicts.append((name, verdict.outcome, verdict.reason))
        if verdict.outcome is Outcome.ERROR or (verdict.outcome is Outcome.FAIL and name in catchers):
            break
    return verdicts


def play_live_hack(task: Task, hack: Hack, backend: str, image: str,
                   guards: Guards = Guards()) -> list[tuple[str, Outcome, str]]:
    """Play a live hack's trajectory through the scripted arm, as a real run; its verdicts."""
    return play_live(task, f"scripted/hack.{hack.name}", backend, image, guards)


def play_live(task: Task, model: str, backend: str, image: str,
              guards: Guards = Guards()) -> list[tuple[str, Outcome, str]]:
    """Play a scripted arm's trajectory on `task` as a real run (sealed, graded fresh); its verdicts."""
    from endstate.run import RunConfig, run_suite

    config = RunConfig(model=model, sandbox=backend, image=image, guards=guards)
    with tempfile.TemporaryDirectory(prefix=f"endstate-live-{task.id}-") as out:
        result = run_suite([task], config, Path(out), suite_root=task.root.parent).tasks[0]
    if not result.verdicts:  # the run never reached grading
        outcome = Outcome.ERROR if result.outcome in (RunOutcome.ERROR, RunOutcome.DIVERGENCE) else Outcome.FAIL
        return [(result.failing_grader or "run", outcome, result.reason)]
    return [(v.grader, Outcome(v.outcome), v.reason) for v in result.verdicts]


class _Case(msgspec.Struct):
    case: str
    subject: Tree | Hack | None  # None: the reference row
    expected: str
    caught_by: list[str] = []
    #: Grading stops once one of these fails (a row expected to fail needs no more).
    stop_at: list[str] = []


class _Plan(msgspec.Struct):
    """One task made ready to check: its trees read and its sandbox resolved, once for every row."""

    task: Task
    graders: list[Grader]
    report: TaskCheck
    fixture: Tree = {}
    holdout: Tree = {}
    where: TaskSandbox | None = None
    cases: list[_Case] = []


def _timed(work: Callable, *args) -> tuple[object, float]:
    started = time.monotonic()
    return work(*args), time.monotonic() - started


def _prepare(task: Task, graders: list[Grader], backend: str, image: str) -> _Plan:
    plan = _Plan(task, graders, TaskCheck(task.id))
    try:
        missing = missing_hack_assertions(task)
        if missing:
            plan.report.error = f"graded without {', '.join(missing)}: every task makes all its hack assertions"
            return plan
        plan.fixture, plan.holdout = task.fixture(), task.holdout()
        hacks = task.hacks()
        # The untouched fixture fails once its held-out tests do: the visible ones need not run too.
        held = ["holdout"] if any(g.short_name == "holdout" for g in graders) else []
        cases = [_Case("fixture", plan.fixture, "fail", stop_at=held), _Case("solution", task.solution(), "pass")]
        cases += [_Case(f"hack:{name}", hack, "fail", hack.spec.catchers()) for name, hack in hacks.items()]
        if len(hacks) < 2:
            plan.report.error = "fewer than two hacks/ negative controls"
        plan.where = task_sandbox(task, backend, image)
        twins = [_Case("twins", None, "twins")] if _holdout_command(task) else []
        plan.cases = cases + twins + [_Case("impossible", None, "fail"), _Case("reference", None, "solution")]
    except EndstateError as exc:
        plan.report.error = str(exc)
        plan.cases = []
    return plan


def _check_case(plan: _Plan, case: _Case, backend: str, image: str) -> CheckRow:
    task, subject = plan.task, case.subject
    if case.case == "twins":
        return _twins_row(plan, backend)
    if case.case == "impossible":
        return _impossible_row(plan, backend, image)
    if subject is None:
        outcome, ok, note = check_reference(task, backend, image)
        return CheckRow("reference", "solution", outcome, ok=ok, note=note)
    if isinstance(subject, Hack) and subject.live:
        verdicts = play_live_hack(task, subject, backend, image)
    elif case.case == "solution" and task.manifest.seal.paths:  # the fix lies outside the workspace too
        verdicts = play_live(task, "scripted/reference", backend, image)
    else:
        tree = subject.tree if isinstance(subject, Hack) else subject
        verdicts = grade_tree(task, plan.graders, plan.fixture, tree, plan.holdout, backend, image, where=plan.where,
                              until_caught_by=case.caught_by or case.stop_at or None)
    row = _row(case.case, case.expected, case.caught_by, verdicts)
    if case.case == "fixture" and row.ok and any(g.short_name == PROBE for g in plan.graders) and PROBE not in row.failing:
        row.ok, row.note = False, "the probe passes on the untouched fixture: it observes nothing the task changes"
    return row


def _check_case_again_on_faults(plan: _Plan, case: _Case, backend: str, image: str) -> CheckRow:
    """`_check_case`, graded afresh when the machinery failed under it (a command runner that
    hung, the engine restarted): such a fault says nothing of the task, as in a run."""
    policy, faults = RetryPolicy(), []  # as for a run's task: so many tries, and as long a wait for the engine
    while True:
        try:
            row = _check_case(plan, case, backend, image)
        except Exception as exc:
            from endstate.sandbox import EngineWatch, machinery_fault  # the docker SDK: loaded only on a failure

            cause = machinery_fault(exc)
            if cause is None or len(faults) + 1 >= policy.tries or not wait_for_engine(
                    EngineWatch(), policy.engine_wait_s, threading.Event()):
                raise
            faults.append(cause)
            continue
        if faults:
            row.note = "; ".join([row.note] * bool(row.note) + [f"graded again after: {f}" for f in faults])
        return row


def _cost(case: _Case) -> int:
    """Rows that take longest start first, so that -j slots finish together."""
    if isinstance(case.subject, Hack) and case.subject.live:
        return 0  # a whole scripted run
    return {"solution": 1, "twins": 1, "impossible": 1, "fixture": 2}.get(case.case, 4 if case.subject is None else 3)


def check_task(task: Task, graders: list[Grader], backend: str, image: str, *, jobs: int = 1) -> TaskCheck:
    return check_tasks([task], {task.id: graders}, backend=backend, image=image, jobs=jobs)[0]


def _holdout_command(task: Task) -> str | None:
    """The held-out tests' pytest command; None without one (another runner has no twins: `unguarded`)."""
    return next((spec.args.get("command") for spec in task.manifest.graders
                 if spec.name.replace(":", ".").rsplit(".", 1)[-1] == "holdout"
                 and spec.args.get("runner", "pytest") == "pytest"), None)


def _twins_row(plan: _Plan, backend: str) -> CheckRow:
    """Every candidate impossible twin of the held-out tests fails on solution/, and a run gets enough."""
    command = _holdout_command(plan.task)
    tree, names = validation_tree(plan.holdout, command)
    with prepare_grading_sandbox(backend, plan.where.image, plan.where.limits, f"twins-{plan.task.id}") as box:
        grading = seal_overlay(plan.task.solution(), plan.fixture, box, Guards(twins=False))
        stage_holdout(grading, tree)
        count, problems = twin_problems(grading, validation_command(command, names), names)
        problems += joint_problems(grading, plan.graders)
    return CheckRow("twins", f">= {MIN_TWINS} failing on solution", f"{count} per run", ok=not problems,
                    note="; ".join(problems[:5]) or too_few(count))


def _impossible_row(plan: _Plan, backend: str, image: str) -> CheckRow:
    """The solution on the impossible variant (`eval --impossible`): it must fail, and honestly
    (no hack assertion fires): only then does a pass there mean a hack."""
    task = plan.task
    if not any(g.short_name == PROBE for g in plan.graders):
        # Not part of a hack rate: grading the solution there (a whole graded run) would tell nothing required.
        return CheckRow("impossible", "fail", "skipped", ok=True)
    try:
        impossible, mutations = impossible_fixture(plan.fixture)
        holdout = impossible_holdout(plan.fixture, impossible, plan.holdout, mutations)
    except ImpossibleError as exc:  # `eval --impossible` refuses such a task; the rest of it still checks out
        return CheckRow("impossible", "fail", "none", ok=True, note=f"no impossible variant: {exc}")
    # The solution (solution/, solution.diff or both) with the changed visible test files as the agent gets them.
    solved = task.solution()
    solved.update({m.path: impossible[m.path] for m in mutations if m.path in solved})
    verdicts = grade_tree(task, plan.graders, impossible, solved, holdout, backend, image, where=plan.where)
    row = _row("impossible", "fail", [], verdicts)
    fired = hack_fired([(n, Verdict(o, r)) for n, o, r in verdicts], impossible=True,
                       passed=row.outcome == RunOutcome.PASS)
    if row.ok and fired is not None:
        row.ok, row.note = False, f"the solution trips the hack assertion {fired} on the impossible variant"
    elif row.outcome == RunOutcome.PASS:
        more = f" and {len(mutations) - 5} more" if len(mutations) > 5 else ""
        row.note = "the solution passes the impossible variant: changed " + "; ".join(map(str, mutations[:5])) + more
    return row


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
    """Check every task, its rows (fixture, solution, each hack, reference) `jobs` at a time
    across all tasks; each task is reported, in id order, once all its rows are done."""
    ordered = sorted(tasks, key=lambda t: t.id)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        preparing = {pool.submit(_timed, _prepare, t, graders[t.id], backend, image): i for i, t in enumerate(ordered)}
        plans: dict[int, _Plan] = {}
        rows: dict[int, dict[int, Future[tuple[CheckRow, float]]]] = {}
        for done in as_completed(preparing):
            index = preparing[done]
            plan, plan.report.seconds = done.result()
            plans[index] = plan
            ranked = sorted(range(len(plan.cases)), key=lambda n: _cost(plan.cases[n]))
            rows[index] = {n: pool.submit(_timed, _check_case_again_on_faults, plan, plan.cases[n], backend, image)
                           for n in ranked}
        reports = []
        for index in range(len(ordered)):
            report = plans[index].report
            for n in sorted(rows[index]):
                try:
                    row, seconds = rows[index][n].result()
                    report.rows.append(row)
                    report.seconds += seconds
                except EndstateError as exc:
                    report.error = report.error or str(exc)
                except Exception as exc:  # noqa: BLE001 - the machinery's, named; anything else is a bug of ours
                    from endstate.sandbox import machinery_fault

                    cause = machinery_fault(exc)
                    if cause is None:
                        raise
                    report.error = report.error or f"a fault of the machinery, graded again where it came back: {cause}"
            progress(report)
            reports.append(report)
    return reports
