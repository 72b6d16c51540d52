"""One test process for the visible tests and the first half of the held-out ones.

A task graded by `tests_pass` and `holdout` would start three test processes: the
visible tests, then each half of the held-out run (see _twins.py). Where both commands
are the same pytest invocation but for the paths they collect, and those paths do not
overlap, the visible tests ride in the first half's process instead:

    pytest OPTIONS HELD_OUT_PATHS VISIBLE_PATHS        (held-out files: the first half's)
    pytest OPTIONS HELD_OUT_PATHS                      (held-out files: the second half's)

Nothing the halves promise changes: the first process is started as a half is (earlier
processes killed, writable places emptied, every copy of the held-out files that half's),
the visible tests have no twins, and each held-out test still meets its twin in neither
process. The held-out tests run first, as they would alone (only the visible modules are
collected, that is imported, before them): nothing a visible test writes or leaves set
can make a twin pass. What the visible tests can meet is what a held-out test or a twin
(which stops at its turned assertion) left behind; `tasks check` grades the solution this
way, and a suite where that matters fails there. Which grader a reported case belongs to is told by its file, as the guard
inside the process saw it (`TestRun.files`); a case it cannot place goes to the visible
tests, so a twin placed nowhere is missing from its half, which fails the run as any
missing twin does. The first half's share is kept in the grading state for `holdout`.
"""

from __future__ import annotations

import inspect
import shlex
from typing import NamedTuple

import msgspec

from endstate.grading._resolve import Grader
from endstate.grading._state import Grading
from endstate.grading._testrun import (
    Canary,
    Case,
    TestCommandError,
    TestRun,
    case_counts,
    parse_test_command,
    run_tests,
)
from endstate.grading._twins import run_halves

__all__ = ["Joint", "plan_joint", "joint_of", "split_run", "run_joint"]

#: Options after which pytest may stop before every test ran: a twin's failure would cut the visible tests short.
_STOPPERS = ("-x", "--exitfirst", "--maxfail", "--sw", "--stepwise", "--lf", "--last-failed", "--ff")


class Joint(NamedTuple):
    #: The tests_pass and holdout commands, as the task gives them.
    visible: str
    held: str
    #: Both in one.
    command: str
    #: The paths the held-out command collects (workspace-relative, node ids cut to their file).
    held_paths: tuple[str, ...]


def _command(grader: Grader) -> str:
    default = inspect.signature(grader.function).parameters["command"].default
    return str(grader.args.get("command", default))


def _paths(targets: list[str]) -> list[str]:
    return [target.split("::", 1)[0].rstrip("/").removeprefix("./") for target in targets]


def _inside(path: str, folder: str) -> bool:
    return path == folder or folder in ("", ".") or path.startswith(folder + "/")


def plan_joint(grading: Grading, graders: list[Grader]) -> Joint | None:
    """The joint run of a task's `tests_pass` and `holdout`, or None where they cannot share one."""
    if grading.twin_plan is None:
        return None  # nothing to save without halves
    return joint_of(grading, graders)


def joint_of(grading: Grading, graders: list[Grader]) -> Joint | None:
    """The command both graders' tests would share, twins or not (None where they cannot)."""
    if not grading.guards.tamper_guard:
        return None  # nothing to place the cases by without the guard
    builtin = [g for g in graders if g.function.__module__ == "endstate.grading._builtin"]
    visible = [g for g in builtin if g.short_name == "tests_pass"]
    held = [g for g in builtin if g.short_name == "holdout"]
    if len(visible) != 1 or len(held) != 1:
        return None
    try:
        (v_runner, v_args, v_env), (h_runner, h_args, h_env) = (parse_test_command(_command(g))
                                                                for g in (visible[0], held[0]))
    except TestCommandError:
        return None
    if v_runner != "pytest" or h_runner != "pytest" or v_env != h_env:
        return None
    common = 0
    while common < min(len(v_args), len(h_args)) and v_args[common] == h_args[common]:
        common += 1
    options, v_targets, h_targets = v_args[:common], v_args[common:], h_args[common:]
    if not v_targets or not h_targets or any(not o.startswith("-") or o.split("=")[0] in _STOPPERS for o in options):
        return None
    present = set(grading.sealed.paths()) | set(grading.staged)
    v_paths, h_paths = _paths(v_targets), _paths(h_targets)
    for path in v_paths + h_paths:
        if path.startswith(("-", "/")) or ".." in path.split("/") or not any(_inside(p, path) for p in present):
            return None  # an option's value, or nothing there: not a plain path this can place cases by
    if any(_inside(v, h) or _inside(h, v) for v in v_paths for h in h_paths):
        return None
    # The held-out tests first: they and their twins run as they would alone, before any visible test
    # could leave a file or a global behind that a twin reads.
    command = shlex.join([*v_env, "python", "-m", "pytest", *options, *h_targets, *v_targets])
    return Joint(_command(visible[0]), _command(held[0]), command, tuple(h_paths))


def split_run(run: TestRun, joint: Joint) -> tuple[TestRun, TestRun]:
    """(the visible tests' share, the held-out tests' share) of the joint run, each counted and
    with the exit status a process of its own tests alone would have had."""
    visible: list[Case] = []
    held: list[Case] = []
    for case in run.cases:
        path = run.files.get(f"{case[0]}::{case[1]}")
        (held if path is not None and any(_inside(path, h) for h in joint.held_paths) else visible).append(case)
    clean = 1 if run.canary == Canary.FAILED or run.failures or run.errors else 0
    return _share(run, visible, clean), _share(run, held, clean)


def _share(run: TestRun, cases: list[Case], clean: int) -> TestRun:
    tests, failures, errors, skipped = case_counts(cases)
    own_clean = 1 if run.canary == Canary.FAILED or failures or errors else 0
    # The output holds both shares' cases (twins among them, drawn per run): a verdict names cases instead.
    # A run that wrote no report collected none: what it said (pytest's own crash) is the one clue.
    return msgspec.structs.replace(run, cases=cases, tests=tests, failures=failures, errors=errors, skipped=skipped,
                                   output_tail=run.output_tail if not run.report_found else "",
                                   exit_code=own_clean if run.exit_code == clean else run.exit_code)


def run_joint(grading: Grading, joint: Joint) -> TestRun:
    """Run the joint process as the first half of the held-out run; the visible tests' share.
    The held-out share waits on `grading.joint_done` for `holdout`, which runs only the second half."""
    [(half, whole)] = run_halves(grading, grading.twin_plan,
                                 lambda prelude, restage: run_tests(grading, joint.command, prelude=prelude,
                                                                    restage=restage),
                                 lambda _: True, limit=1)
    visible, held = split_run(whole, joint)
    grading.joint_done = [(half, held)]
    return visible
