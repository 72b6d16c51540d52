"""A graded run of a runner other than pytest, and its verdict by test id.

The run is made as pytest's is (`_testrun.run_tests`), less what only pytest's process can
carry: a fresh scratch copy of the graded tree, a clean environment, the harness's entry point
(runner `program`: the project's program under the image's Python, the workspace and the task's
import folders as its PYTHONPATH), namespaces of its own in a fresh grading container, everything
it starts killed after it, and its output written to its report folder and read from there as a
file whatever its size. No guard plugin, guard canary or twin is in it (the task says so: `unguarded`); a
canary of the runner's own is (`LogCanary`, `log_canary`): named among its arguments, it must read failed.
It gets the runner's own time (`LogRunner.timeout_s`: what SWE-bench's harness gives an instance),
not the sandbox's command timeout (a limit per command of the agent's): the program runs whole files.

The verdict reads that output as SWE-bench's parser does (`_runners.read_log`). Given the ids
(`tests`: the dataset's FAIL_TO_PASS or PASS_TO_PASS), each must be read as passed: an id read
with another status fails the verdict, and an id not read at all is named with the nearest ids
that were, never dropped. Without ids, every test read must pass, and at least `min_tests` of them.
"""

from __future__ import annotations

import secrets
import shlex

from endstate.errors import FolderTooLarge
from endstate.grading._runners import ERROR, FAILED, PASSED, SKIPPED, LogRunner, find_tests, read_log
from endstate.grading._state import Grading
from endstate.grading._testrun import (
    _ENV,
    HARNESS_DIR,
    REPORT_DIR,
    REPORT_MAX_BYTES,
    Canary,
    CaseOutcome,
    TestRun,
    _scratch_copy,
    _tail,
    import_paths,
    isolation,
    run_bounds,
    shown_command,
    workspace_of,
)
from endstate.grading._verdict import Verdict
from endstate.sandbox import WORKDIR, FileEntry

__all__ = ["run_logged", "graded_by_log", "LOG_FILE"]

#: What the entry point writes the program's output (both streams) to, in the run's report folder.
LOG_FILE = "output.log"
_OUTCOMES = {PASSED: CaseOutcome.PASSED, FAILED: CaseOutcome.FAILURE, ERROR: CaseOutcome.ERROR,
             SKIPPED: CaseOutcome.SKIPPED, "XFAIL": CaseOutcome.PASSED}


def run_logged(grading: Grading, runner: LogRunner, command: str, *, timeout: float | None = None,
               visible_only: bool = False) -> tuple[TestRun, dict[str, str], str]:
    """Run `command` with `runner` in the grading sandbox: (the run, each test id read -> its status,
    who read it). The run's cases are the ids read, in the output's order."""
    program, env = runner.argv(command)
    paths, env = import_paths(env)
    box, nonce = grading.box, secrets.token_hex(8)
    report_at, workspace = f"{REPORT_DIR}/{nonce}", workspace_of(grading, nonce)
    hidden = visible_only and bool(grading.visible) and bool(isolation(grading, []))
    tree = grading.visible if hidden else grading.graded
    canary = runner.canary(program[1:], set(tree) | set(grading.staged)) \
        if grading.guards.log_canary and grading.graded else None
    if canary is not None:  # staged with this run's copy alone, root's and read-only (it is code)
        program = [*program, canary.argument]
        tree = {**tree, canary.path: FileEntry(0o644, canary.source)}
    own = [workspace, report_at, *([f"{WORKDIR}={workspace}"] if hidden else [])]
    wrapper = isolation(grading, own)
    restage = {report_at: ({}, "agent")} if grading.graded else {}
    argv = ["env", "-i", *_ENV, *runner.env, *env, "python3", "-s", "-B", f"{HARNESS_DIR}/endstate_runner.py", "program",
            REPORT_DIR, nonce, "noguard", workspace, ":".join(paths), "--", *program]
    line = f"{shlex.join(argv)}; status=$?; kill -s KILL -1 2>/dev/null; exit $status"
    bounds = run_bounds(grading, workspace, report_at)
    held = box.bound_folders(bounds)
    try:
        _scratch_copy(grading, nonce, restage, kept=not held, tree=tree if hidden or canary else None)
        result = box.exec_wrapped(line, wrapper, timeout=timeout)
        said = result.stdout + result.stderr
        run = TestRun(result.exit_code, result.timed_out, _tail(canary.scrubbed(said) if canary is not None else said))
        try:
            reports = box.read_folder(report_at, max_bytes=REPORT_MAX_BYTES)
        except (FileNotFoundError, FolderTooLarge):
            return run, {}, ""
    finally:
        if held:
            box.release_folders(list(bounds))
    entry = reports.get(LOG_FILE)
    if entry is None or entry.link:
        return run, {}, ""
    log = entry.data.decode("utf-8", errors="replace")
    status, reader = read_log(runner, log)
    if canary is not None:
        run.canary = _canary_state(canary.outcomes(status))
        status = {test: outcome for test, outcome in status.items() if canary.word not in test}
    run.report_found = True
    run.output_tail = _tail(canary.scrubbed(log) if canary is not None else log) or run.output_tail
    run.cases = [("", test, _OUTCOMES.get(outcome, CaseOutcome.ERROR)) for test, outcome in status.items()]
    outcomes = [outcome for _, _, outcome in run.cases]
    run.tests, run.failures = len(outcomes), outcomes.count(CaseOutcome.FAILURE)
    run.errors, run.skipped = outcomes.count(CaseOutcome.ERROR), outcomes.count(CaseOutcome.SKIPPED)
    return run, status, reader


def _canary_state(seen: list[str]) -> Canary:
    """The canary's state from what the runner reported for it: FAILED when every report of it failed or
    erred (its assertion, or an error on the way there), else the first other status, MISSING when none."""
    wrong = [outcome for outcome in seen if outcome not in (FAILED, ERROR)]
    if not seen:
        return Canary.MISSING
    return Canary.FAILED if not wrong else Canary.SKIPPED if wrong[0] == SKIPPED else Canary.PASSED


def _listed(items: list[str], limit: int = 5) -> str:
    return "; ".join(items[:limit]) + (f"; and {len(items) - limit} more" if len(items) > limit else "")


def graded_by_log(grading: Grading, runner: LogRunner, command: str, min_tests: int, tests: list[str] | None,
                  what: str, *, visible_only: bool = False) -> Verdict:
    """The verdict of one run of `runner` (see the module's docstring)."""
    run, status, reader = run_logged(grading, runner, command, timeout=runner.timeout_s, visible_only=visible_only)
    if run.timed_out:
        return Verdict.fail(f"{what}: `{shown_command(command)}` timed out after {runner.timeout_s:.0f} s")
    if not run.report_found:
        return Verdict.fail(f"{what}: `{shown_command(command)}` left no output to read (exit {run.exit_code}): {run.output_tail}")
    if run.canary in (Canary.PASSED, Canary.SKIPPED):
        return Verdict.tampered(
            f"{what}: test outcomes were rewritten inside the test process: the harness's canary test, which always "
            f"fails, was read from {runner.name}'s output as {run.canary} (code in the end state tampers with the "
            "runner or its output)")
    if run.canary == Canary.MISSING and status:
        return Verdict.fail(f"{what}: the harness's canary test, which always fails, is not in {runner.name}'s "
                            f"output, which was cut short or rewritten (exit {run.exit_code}): {run.output_tail}")
    read = f"read by {reader}; {runner.name}'s runner, no in-process guard" + \
        ("; its canary failed as it must" if run.canary == Canary.FAILED else "")
    if tests is None:
        failing = [f"{test}: {outcome}" for test, outcome in status.items() if outcome in (FAILED, ERROR)]
        ran = sum(outcome == PASSED for outcome in status.values())
        if failing:
            return Verdict.fail(f"{what}: {len(failing)} of {len(status)} failed: {_listed(failing)}")
    else:
        passed, wrong, missing = find_tests(tests, status)
        if missing:
            return Verdict.fail(f"{what}: {len(missing)} of {len(tests)} test(s) not in {runner.name}'s report "
                                f"(exit {run.exit_code}): {_listed(missing, 3)} | {run.output_tail}")
        if wrong:
            return Verdict.fail(f"{what}: {len(wrong)} of {len(tests)} did not pass: {_listed(wrong)}")
        ran = len(passed)
    if ran < min_tests:
        return Verdict.fail(f"{what}: {ran} test(s) passed, the task expects at least {min_tests}")
    return Verdict.ok(f"{what}: {ran} passed ({read})")
