"""endstate's own entry point for a graded test run (runs inside the grading sandbox).

The harness runs it as

    python3 -s -B /opt/endstate/harness/endstate_runner.py RUNNER REPORT_DIR NONCE GUARD WORKSPACE PATHS -- ARGS...

with RUNNER `pytest` or `unittest`, WORKSPACE the folder the tests run in (a scratch
copy of the graded tree), PATHS the task's own import folders (`src`, ":"-separated,
relative to WORKSPACE; "" for none: what a project's PYTHONPATH says) and ARGS the
task's own arguments for the runner. It imports the test runner (and the guard) before
the workspace or any of its folders joins sys.path, so no file of the end state
(`pytest.py`, `_pytest/`, `unittest/`, a `.pyc`) can stand in for them; then puts the
workspace first on sys.path, the way `python -m pytest` puts the working directory,
and the task's folders right after it, the way PYTHONPATH would, and runs. The report is written to REPORT_DIR/NONCE/
as report.xml (JUnit XML, from pytest's own writer or from the recorder below), the
guard's findings as guard.json once the run has finished.
"""

import hashlib
import importlib
import json
import os
import sys

HARNESS = os.path.dirname(os.path.abspath(__file__))
#: What the unittest recorder observed, for the guard's report.
_unittest_tally = {}
WORKSPACE = "/workspace"
#: Folders of the workspace the project imports from (its PYTHONPATH), set by main().
_paths = []


def _join_workspace():
    """The workspace, then the task's own import folders, at the front of sys.path."""
    sys.path[0:0] = [WORKSPACE] + [os.path.join(WORKSPACE, p) for p in _paths]


def _imported_guard(enabled):
    if not enabled:
        return None
    sys.path.insert(0, HARNESS)
    try:
        import endstate_guard
    finally:
        sys.path.remove(HARNESS)
    endstate_guard.workspace = WORKSPACE
    try:  # what the agent added or changed, written by the harness at staging
        with open(os.path.join(HARNESS, "changed.json"), encoding="utf-8") as listing:
            endstate_guard.changed = set(json.load(listing))
    except (OSError, ValueError):
        endstate_guard.changed = None
    return endstate_guard


def _without_harness_path():
    # The script's own folder is sys.path[0] when run as a file: nothing there may be imported later.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HARNESS]


def _run_pytest(report, guard, args):
    import pytest
    from _pytest import config as pytest_config

    for name in pytest_config.default_plugins:
        try:
            importlib.import_module("_pytest." + name)
        except ImportError:
            pass
    if guard is not None:
        guard.snapshot()
    _join_workspace()
    full = list(args) + ["-p", "no:cacheprovider", "--junitxml=" + report, "-o", "junit_family=xunit2",
                         "--confcutdir=" + WORKSPACE]
    return pytest.main(full, plugins=[guard] if guard is not None else [])


def _run_unittest(report, guard, args):
    import unittest
    import doctest  # noqa: F401 - imported before the workspace can shadow it
    from xml.sax.saxutils import quoteattr

    if guard is not None:
        guard.snapshot()
    _join_workspace()

    cases = []
    _unittest_tally.clear()

    class Recorder(unittest.TextTestResult):
        def _add(self, test, outcome, detail=""):
            cases.append((test.id(), outcome, detail))

        def addSuccess(self, test):
            super().addSuccess(test)
            self._add(test, "passed")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._add(test, "failure", self._exc_info_to_string(err, test))

        def addError(self, test, err):
            super().addError(test, err)
            self._add(test, "error", self._exc_info_to_string(err, test))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._add(test, "skipped", reason)

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._add(test, "skipped", "expected failure")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._add(test, "failure", "unexpected success")

    runner = unittest.TextTestRunner(resultclass=Recorder, verbosity=1)
    program = unittest.main(module=None, argv=["python -m unittest"] + list(args), testRunner=runner, exit=False)
    result = program.result
    counts = {"tests": len(cases), "failures": sum(1 for c in cases if c[1] == "failure"),
              "errors": sum(1 for c in cases if c[1] == "error"),
              "skipped": sum(1 for c in cases if c[1] == "skipped")}
    _unittest_tally.update(counts, by_name={c[0].rpartition(".")[2]: c[1] for c in cases})
    lines = ['<testsuites><testsuite name="unittest" ' +
             " ".join(f'{k}="{v}"' for k, v in counts.items()) + ">"]
    for test_id, outcome, detail in cases:
        classname, _, name = test_id.rpartition(".")
        body = "" if outcome == "passed" else f"<{outcome} message={quoteattr(detail[-2000:])}/>"
        lines.append(f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}>{body}</testcase>")
    lines.append("</testsuite></testsuites>")
    with open(report, "w", encoding="utf-8") as out:
        out.write("\n".join(lines))
    if not cases:
        return 5
    return 0 if result.wasSuccessful() else 1


def main(argv):
    global WORKSPACE
    runner, report_dir, nonce, guard_flag, workspace, paths, separator, *args = argv
    if separator != "--" or not os.path.isabs(workspace):
        print("endstate_runner: usage: RUNNER REPORT_DIR NONCE GUARD WORKSPACE PATHS -- ARGS...", file=sys.stderr)
        return 64
    WORKSPACE = workspace
    _paths[:] = [p for p in paths.split(":") if p]
    if any(os.path.isabs(p) or ".." in p.split("/") for p in _paths):
        print(f"endstate_runner: import folders must lie inside the workspace: {paths!r}", file=sys.stderr)
        return 64
    sys.dont_write_bytecode = True
    _without_harness_path()
    guard = _imported_guard(guard_flag == "guard")
    # Taken now, so a patched copy of the guard cannot answer for it later.
    findings = guard.findings if guard is not None else None
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        os.environ.pop(name, None)
    folder = os.path.join(report_dir, nonce)
    os.mkdir(folder)
    report = os.path.join(folder, "report.xml")
    if guard is not None:
        guard.report_path = report
    os.chdir(WORKSPACE)
    if runner == "pytest":
        code = _run_pytest(report, guard, args)
    elif runner == "unittest":
        code = _run_unittest(report, guard, args)
    else:
        print(f"endstate_runner: unknown runner {runner!r}", file=sys.stderr)
        return 64
    if findings is not None:
        found = findings()
        now = None
        if os.path.exists(report):
            with open(report, "rb") as written:
                now = hashlib.sha256(written.read()).hexdigest()
        if guard.report_digest is not None and now != guard.report_digest:
            found.append("the report was rewritten after pytest wrote it")
        observed = guard.tally() if runner == "pytest" else _unittest_tally
        with open(os.path.join(folder, "guard.json"), "w", encoding="utf-8") as out:
            json.dump({"findings": found, "report_sha256": guard.report_digest, "observed": observed}, out)
    return int(code)


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # No atexit handler or leftover thread of the code under test runs after the
    # report and the guard's findings are written.
    os._exit(status)
