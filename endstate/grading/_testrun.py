"""Test runs the end state cannot redirect.

A task names its test command the way its project runs it (`python -m pytest -q
tests`, `python -m unittest discover -s tests`); the harness does not run that
string. It takes the runner and its arguments from it and runs them through its own
entry point (`harness/endstate_runner.py`) in the grading sandbox:

- with an interpreter that ignores the user's site folder and a clean environment;
- with pytest (or unittest) imported before the workspace joins sys.path, so no
  file of the end state stands in for them;
- with plugin autoload off and the guard (`harness/endstate_guard.py`) loaded first;
- with a *canary*: a test file staged next to the tests, under a random name, that
  always fails. If the report says it passed (or skipped), something inside the
  test process rewrote the outcomes;
- with the report written to a harness folder and read back as a file, whatever
  its size (never through capped command output);
- in a scratch copy of the graded tree, made for this run alone: its code and what the harness
  staged stay root's and read-only, its data files are the test user's, its folders take new
  files (sticky, like /tmp), so a suite
  that writes caches or outputs next to itself runs as upstream, and nothing it
  writes reaches the next run or any verdict (graders read the sealed snapshot);
- in network, IPC, pid and mount namespaces of its own, made for it by root in a fresh
  grading container (`isolation`, harness/endstate_isolate.py): nothing an earlier process
  left in the kernel or a temporary place is there, and it leaves nothing for a later one;
- from a warm start where the sandbox allows (`start_warm_runner`): the entry point,
  started once as root with pytest already imported, forks each pytest run, which
  becomes the test user before anything of the end state runs. It saves each run
  the import of pytest (most of a small suite's CPU) and changes nothing the run can
  see but its parent process: same user, groups, environment, argv, limits, umask and
  streams, fresh random state. Each run is unlocked by a one-use token only root can
  read, so no code of the end state can ask it for a run of its own.

The command's `NAME=value` words are its environment, set for the test process,
except `PYTHONPATH`: the runner puts those folders (relative to the workspace) on
sys.path itself, after the test runner is imported, so a project's `src` layout
works without letting a folder of the end state shadow pytest. Both come from the
task's manifest, never from the graded tree.
"""

from __future__ import annotations

import enum
import hashlib
import re
import secrets
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib import resources

import msgspec

from endstate.errors import FolderTooLarge
from endstate.grading._state import Grading
from endstate.sandbox import RESTRICT, WORKDIR, FileEntry, ProjectCopy, Tree
from endstate.task import is_test_module

__all__ = ["Canary", "Case", "CaseOutcome", "FAILING", "case_counts", "TestRun", "TestCommandError", "command_words", "parse_test_command", "import_paths", "run_tests",
           "harness_files", "isolation", "plant_canaries", "collected_folders", "start_warm_runner", "run_bounds", "footprint", "HARNESS_DIR",
           "REPORT_DIR", "SCRATCH_DIR", "WARM_DIR", "WIPE", "PLAIN_FLAGS", "REPORT_MAX_BYTES", "shown_command"]

HARNESS_DIR = "/opt/endstate/harness"
REPORT_DIR = "/opt/endstate/report"
#: Each graded test run gets its own copy of the graded tree below this folder.
SCRATCH_DIR = "/opt/endstate/scratch"
#: Where the warm entry point listens, and finds each run's token (root's alone).
WARM_DIR = "/opt/endstate/warm"
#: A report larger than this is refused rather than read (700 tests with failures is ~1 MB).
REPORT_MAX_BYTES = 64 * 1024 * 1024
#: At most this many characters of what each failed case's report says (`TestRun.messages`).
MESSAGE_MAX = 2000
#: The name a case is read under whose report has none: its session ended inside it (see `_junit`).
CUT_SHORT = "(a test the session ended inside)"
#: At most this many characters of a test command, as a verdict's reason names it.
COMMAND_SHOWN = 120


def shown_command(command: str) -> str:
    """`command` as a one-line reason names it: a long one (a SWE-bench record's hundred node ids) cut at a
    word, so that what happened to it is not cut off after it (the task's own file holds it whole)."""
    if len(command) <= COMMAND_SHOWN:
        return command
    return f"{command[:COMMAND_SHOWN].rsplit(' ', 1)[0]} ... ({len(command.split())} words)"
_MIB, _PAGE = 1024 * 1024, 4096

_ENV = ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/home/agent", "TZ=UTC",
        "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PYTHONHASHSEED=0")
_PYTEST_PROGRAMS = {"pytest", "py.test", "pytest-3"}
#: Emptied (as the test user) before each half of a held-out run: nothing a process of an
#: earlier run left behind survives (see _twins.py). /dev/mqueue lists the POSIX message
#: queues, which outlive their process like files and are unlinked like them. Behind the
#: namespaces each process of the end state starts in (`isolation`), which give it these
#: places new and hide earlier runs' folders, this only matters with that guard off.
WIPED = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue", "/run/lock", "/home/agent", REPORT_DIR, SCRATCH_DIR)
#: The same as a shell line, run before a run that starts cold (a warm one's client does it itself).
WIPE = (f"for d in {' '.join(WIPED)}; do chmod -R u+rwX \"$d\" 2>/dev/null; find \"$d\" -mindepth 1 -delete "
        "2>/dev/null; done; ipcrm --all 2>/dev/null; true")
#: Variables an interpreter reads when it starts: a command that sets one starts its own.
_AT_START = ("PYTHON", "LANG", "LC_", "TZ")
_PYTHONS = {"python", "python3"}


class TestCommandError(ValueError):
    """A task's test command the harness cannot run as a test runner invocation."""

    __test__ = False


class CaseOutcome(enum.StrEnum):
    """A test case's outcome as its report gives it."""

    PASSED = "passed"
    FAILURE = "failure"
    ERROR = "error"
    SKIPPED = "skipped"


#: The outcomes of a case that ran and did not pass.
FAILING = frozenset({CaseOutcome.FAILURE, CaseOutcome.ERROR})
#: One reported test case: (classname, name, outcome).
Case = tuple[str, str, CaseOutcome]


def case_counts(cases: list[Case]) -> tuple[int, int, int, int]:
    """(tests, failures, errors, skipped) of `cases`, as a run's report counts them."""
    outcomes = [outcome for _, _, outcome in cases]
    return (len(outcomes), outcomes.count(CaseOutcome.FAILURE), outcomes.count(CaseOutcome.ERROR),
            outcomes.count(CaseOutcome.SKIPPED))


class Canary(enum.StrEnum):
    """What became of the harness's canary test, which always fails: FAILED as it must, the outcome
    it was reported with instead, MISSING when no command collected it, OFF when runs have no guard."""

    FAILED = "failed"
    PASSED = "passed"
    ERROR = "error"
    SKIPPED = "skipped"
    MISSING = "missing"
    OFF = "off"


def canary_of(seen: list[str]) -> Canary:
    """The canary's state from the outcome of each copy collected: one that did not fail tells (an
    outcome no runner reports, as a guard's report rewritten from inside the test process may say,
    is an error)."""
    wrong = [outcome for outcome in seen if outcome != CaseOutcome.FAILURE]
    if not wrong:
        return Canary.FAILED if seen else Canary.MISSING
    return Canary(wrong[0]) if wrong[0] in Canary.__members__.values() else Canary.ERROR


class TestRun(msgspec.Struct):
    """What one graded test run reported (the canary left out of every count)."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    exit_code: int
    timed_out: bool
    output_tail: str
    report_found: bool = False
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    canary: Canary = Canary.OFF
    #: What the guard saw change inside the test process; None when it never reported.
    findings: list[str] | None = None
    #: Every test case reported, canaries left out.
    cases: list[Case] = []
    #: Per case ("classname::name"), its file relative to the workspace, as the guard saw it.
    files: dict[str, str] = {}
    #: Per case that failed or errored ("classname::name"), what its report says was raised: the
    #: failure's message, then the first and the last lines of its text (about `MESSAGE_MAX` characters).
    messages: dict[str, str] = {}
    #: Per case that failed or errored, the last `MESSAGE_MAX` characters of what it printed, where its
    #: report holds that (pytest's `junit_logging`; pytest before 3.5 always wrote it).
    captured: dict[str, str] = {}


#: Words that make a command a shell line rather than one program's run.
_SHELL_WORDS = ("|", "||", "&&", ";", "&", ">", "<")


def command_words(command: str, wanted: str) -> tuple[list[str], list[str]]:
    """(the program and its arguments, the NAME=value words before them) of a task's test command,
    split as a shell splits it; a TestCommandError, saying to give `wanted`, when it does not parse
    or is a shell line (a pipe, `&&`, a redirection, a substitution)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise TestCommandError(f"test command {command!r} does not parse ({exc})") from None
    env = []
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        env.append(words.pop(0))
    if any(w in _SHELL_WORDS or w.startswith(("$(", "`")) for w in words):
        raise TestCommandError(f"test command {command!r} is a shell line: give {wanted}")
    return words, env


def parse_test_command(command: str) -> tuple[str, list[str], list[str]]:
    """(runner, its arguments, NAME=value environment words) of a task's test command.

    Accepted: `[NAME=value ...] python[3] -m pytest ARGS`, `pytest ARGS`,
    `python[3] -m unittest ARGS`. Anything else (pipes, `&&`, other programs) is a
    TestCommandError: the harness runs test runners, not shell lines.
    """
    words, env = command_words(command, "a plain pytest or unittest invocation")
    if words and words[0] in _PYTEST_PROGRAMS:
        return "pytest", words[1:], env
    if len(words) >= 3 and words[0] in _PYTHONS and words[1] == "-m" and words[2] in ("pytest", "unittest"):
        return words[2], words[3:], env
    raise TestCommandError(
        f"test command {command!r} is not a test runner invocation: use `python -m pytest ARGS` or "
        "`python -m unittest ARGS`"
    )


def import_paths(env: list[str]) -> tuple[list[str], list[str]]:
    """(the PYTHONPATH folders, the other NAME=value words) of a command's environment.

    The folders must be relative and stay inside the workspace (TestCommandError else)."""
    paths, rest = [], []
    for word in env:
        name, _, value = word.partition("=")
        if name != "PYTHONPATH":
            rest.append(word)
            continue
        for folder in filter(None, value.split(":")):
            folder = folder.rstrip("/") or folder
            if folder.startswith("/") or ".." in folder.split("/"):
                raise TestCommandError(f"PYTHONPATH={value} names {folder}: a test command's import folders are "
                                       "relative to the project, inside it (PYTHONPATH=src)")
            if folder not in (".", *paths):
                paths.append(folder.removeprefix("./"))
    return paths, rest


def harness_files() -> Tree:
    folder = resources.files("endstate.grading").joinpath("harness")
    files = {name: FileEntry(0o644, folder.joinpath(name).read_bytes())
             for name in ("endstate_runner.py", "endstate_guard.py", "endstate_connect.py", "endstate_isolate.py")}
    return {**files, "endstate_restrict.py": FileEntry(0o644, RESTRICT.encode())}


def isolation(grading: Grading, own: list[str]) -> list[str]:
    """The wrapper that starts a process of the end state in namespaces of its own, carrying
    `own` (its scratch copy, its report folder) into them; [] where grading runs in the agent's
    own sandbox (nothing to isolate it from) or the guard is off."""
    if not (grading.graded and grading.guards.process_isolation):
        return []
    return ["python3", "-I", "-S", f"{HARNESS_DIR}/endstate_isolate.py",
            *(word for folder in own for word in ("--own", folder)), "--"]


#: At most this many canaries: one per folder holding tests, shallowest first.
MAX_CANARIES = 32


def _test_folders(paths: set[str], within: set[str] | None) -> list[str]:
    """Folders that hold test files (test_*.py, *_test.py), shallowest first; "" is the root. Only
    those at or below a folder of `within`, where it is given."""
    folders = set()
    for path in paths:
        folder, _, name = path.rpartition("/")
        if is_test_module(name):
            folders.add(folder)
    folders = folders or {""}
    if within is not None:
        folders = {f for f in folders if any(f == w or f.startswith(f"{w}/") for w in within)}
    return sorted(folders, key=lambda f: (f.count("/") if f else -1, f))[:MAX_CANARIES]


#: pytest's options that take no value: the word after one is an argument of the run's own. After
#: any other option word (`-k`, `--deselect`, a plugin's) the next may be its value.
PLAIN_FLAGS = re.compile(r"-[qvxsl]+|-r\w+|--(?:quiet|verbose|exitfirst|showlocals|disable-(?:pytest-)?warnings"
                    r"|no-header|no-summary|strict|strict-markers|strict-config|runxfail)")


def _named_paths(args: list[str], is_path: Callable[[str], bool]) -> list[str] | None:
    """The paths of the tree a pytest run's `args` name as what to collect (a node id's file), or None when
    that cannot be told: a word that may be an option's value names one (`-k tests`, `-c pytest.ini`)."""
    named, value = [], False
    for word in args:
        path = word.split("::", 1)[0].removeprefix("./").rstrip("/") or "."
        if word.startswith("-"):
            value = "=" not in word and not PLAIN_FLAGS.fullmatch(word)
        elif value and is_path(path):
            return None
        elif not value and is_path(path):
            named.append(path)
        else:
            value = False
    return named


def collected_folders(commands: list[str | None], paths: set[str]) -> set[str] | None:
    """The folders of the tree whose tests pytest `commands` can collect, read from the paths they name:
    a folder named, and those below it; never the folder of a file or node id named, which pytest does not
    collect. None where a command may collect anywhere: it names no path of the tree (pytest collects its
    `testpaths` or the root), names the root, is not a pytest command, is not known (None), or its paths
    cannot be told from its options' values."""
    folders = {path.rsplit("/", i)[0] for path in paths for i in range(1, path.count("/") + 1)} | {"."}
    named: set[str] = set()
    for command in commands:
        try:
            runner, args, _ = parse_test_command(command) if command else ("", [], [])
        except TestCommandError:
            return None
        found = _named_paths(args, lambda path: path in paths or path in folders)
        if runner != "pytest" or not found or "." in found:
            return None
        named.update(path for path in found if path in folders)
    return named


def plant_canaries(paths: set[str], within: set[str] | None = None
                   ) -> dict[str, tuple[str, FileEntry, tuple[str, ...]]]:
    """A canary per folder holding tests (`within` those folders, where given: `collected_folders`):
    path -> (test name, file, words marking its output).

    Staged with the tests, so whichever folders a command collects, it collects their
    canary too; every collected canary must be reported failed. None goes where no command
    collects it: there it is only a file more, which a test that reads its folder as data
    would see (pylint's pyreverse tests draw every module of `tests/data`).
    """
    planted = {}
    for folder in _test_folders(paths, within):
        path, name, source, marks = _canary(folder)
        planted[path] = (name, FileEntry(0o644, source), marks)
    return planted


def _canary(folder: str) -> tuple[str, str, bytes, tuple[str, ...]]:
    """(workspace path, test name, source, words that mark its output) of a test that
    always fails and looks like any other."""
    word = secrets.token_hex(4)
    name = f"test_{word}"
    left, right = str(secrets.randbelow(10**6)), str(10**6 + secrets.randbelow(10**6))
    source = (f"import unittest\n\n\nclass Test{word.capitalize()}(unittest.TestCase):\n"
              f"    def {name}(self):\n        self.assertEqual({left}, {right})\n")
    path = f"{folder}/{name}.py" if folder else f"{name}.py"
    return path, name, source.encode(), (word, left, right)


def start_warm_runner(grading: Grading) -> None:
    """Start the entry point's warm server in the grading sandbox, in the background; later pytest
    runs use it once it answers (and run as before where it cannot start). Called once the probe has
    run (its program must find nothing of a test runner). Never for a root end state: it owns the
    image's Python, which then runs only as a test run's command, within its fence."""
    line = (f"mkdir -p -m 0755 {WARM_DIR} && exec {shlex.join(['env', '-i', *_ENV])} python3 -s -B "
            f"{HARNESS_DIR}/endstate_runner.py --serve {WARM_DIR}")
    grading.warm_runner = grading.box.limits.agent_uid != 0 and bool(grading.box.spawn_root(["bash", "-c", line]))


def run_tests(grading: Grading, command: str, *, timeout: float | None = None, prelude: str = "",
              restage: dict[str, tuple[Tree, str]] | None = None, visible_only: bool = False) -> TestRun:
    """Run a task's test command through the harness's entry point in the grading sandbox:
    one command and one read of its report folder (`prelude`: a shell line run first, as
    the test user; `restage`: harness trees written first, with this run's scratch copy).

    `visible_only`: the run needs no held-out file, and no held-out file is where it can
    read one: its scratch copy holds none, and in its namespaces that copy is /workspace too."""
    runner, args, env = parse_test_command(command)
    paths, env = import_paths(env)
    box = grading.box
    guard, canaries = grading.guards.tamper_guard, list(grading.canaries)
    nonce = secrets.token_hex(8)
    restage = dict(restage or {})
    entry = ["python3", "-s", "-B", f"{HARNESS_DIR}/endstate_runner.py"]
    report_at, workspace = f"{REPORT_DIR}/{nonce}", workspace_of(grading, nonce)
    hidden = visible_only and bool(grading.visible) and bool(isolation(grading, []))
    own = [workspace, report_at, *([f"{WORKDIR}={workspace}"] if hidden else [])]
    wrapper = isolation(grading, own)
    if grading.graded:  # made by the harness, with the scratch copy, so that a run's namespaces can carry it in
        restage[report_at] = ({}, "agent")
    # A wipe spares this run's own copy (laid first; its data files are the test user's): earlier copies, by name.
    wiped = [d for d in WIPED if d != SCRATCH_DIR or not grading.graded] + grading.scratch_copies
    wiping = prelude == WIPE
    prelude = WIPE.replace(" ".join(WIPED), " ".join(wiped), 1) if wiping else prelude
    if grading.warm_runner and runner == "pytest" and not any(word.startswith(_AT_START) for word in env):
        token = secrets.token_hex(16)
        key = {"token": FileEntry(0o644, token.encode())}
        isolated = ["--isolated"] if wrapper else []
        if wrapper:  # the warm server makes the namespaces itself, from what root alone may read
            key["isolate"] = FileEntry(0o644, "\n".join(own).encode())
            wrapper = []
        restage[f"{WARM_DIR}/key"] = (key, "private")
        wipe, prelude = (["--wipe", *wiped], "") if wiping else ([], prelude)
        entry = ["python3", "-I", "-S", f"{HARNESS_DIR}/endstate_connect.py", WARM_DIR, token, *isolated, *wipe,
                 "--"]
    argv = ["env", "-i", *_ENV, *env, *entry, runner,
            REPORT_DIR, nonce, "guard" if guard else "noguard", workspace, ":".join(paths), "--", *args]
    # Nothing the test process started may outlive it into the next graded run.
    line = f"{prelude + '; ' if prelude else ''}{shlex.join(argv)}; status=$?; kill -s KILL -1 2>/dev/null; exit $status"
    marks = tuple(mark for _, words in canaries for mark in words)
    bounds = run_bounds(grading, workspace, report_at)
    held = box.bound_folders(bounds)
    try:
        _scratch_copy(grading, nonce, restage, kept=not held, tree=grading.visible if hidden else None)
        result = box.exec_wrapped(line, wrapper, timeout=timeout)
        said = (result.stdout + result.stderr).replace(workspace + "/", "/workspace/")  # the nonce is per run
        run = TestRun(result.exit_code, result.timed_out, _tail(said, marks))
        try:
            reports = box.read_folder(report_at, max_bytes=REPORT_MAX_BYTES)
        except FileNotFoundError:
            return run
        except FolderTooLarge:  # only the test process writes there besides the harness's small files
            run.findings = [f"the test process filled its report folder past {REPORT_MAX_BYTES} bytes"]
            return run
    finally:
        if held:
            box.release_folders(list(bounds))
    report = reports.get("report.xml")
    data = report.data if report and not report.link else None
    parsed = _junit(data, {name for name, _ in canaries}) if data is not None else None
    observed: _Observed | None = None
    if guard:
        run.findings, digest, observed = _guard_report(reports.get("guard.json"))
        if run.findings is not None and digest and (data is None or hashlib.sha256(data).hexdigest() != digest):
            run.findings.append("the report was rewritten after the test process finished")
    if parsed is None:  # what a report that is not there or does not read says is the guard's alone
        return run
    run.report_found = True
    counts, run.cases, run.messages, run.captured = parsed[:5], parsed[5], parsed[6], parsed[7]
    run.tests, run.failures, run.errors, run.skipped, run.canary = counts
    if not guard:
        run.canary = Canary.OFF
        return run
    if observed is not None:
        run.files = dict(observed.files)
        names = {name for name, _ in canaries}
        seen = [o for n, o in observed.by_name.items() if n in names]
        canary = canary_of(seen)
        expected = (observed.tests - len(seen), observed.failures - seen.count(CaseOutcome.FAILURE),
                    observed.errors - seen.count(CaseOutcome.ERROR),
                    observed.skipped - seen.count(CaseOutcome.SKIPPED), canary)
        if expected != counts:
            run.findings.append(f"the written report ({counts[0]} tests, {counts[1]} failed, {counts[2]} errors) "
                                f"disagrees with what the test process observed ({expected[0]} tests, "
                                f"{expected[1]} failed, {expected[2]} errors)")
    return run


class _Observed(msgspec.Struct):
    """What the guard saw the test process run (endstate_guard.tally, or the unittest recorder's)."""

    tests: int
    failures: int
    errors: int
    skipped: int
    by_name: dict[str, str]
    files: dict[str, str] = {}  # pytest's alone


class _GuardReport(msgspec.Struct):
    """guard.json as endstate_runner.py writes it: every field, always."""

    findings: list[str]
    report_sha256: str | None
    observed: _Observed


_GUARD_REPORT = msgspec.json.Decoder(_GuardReport)


def _guard_report(entry: FileEntry | None) -> tuple[list[str] | None, str | None, _Observed | None]:
    """(findings, the report's digest, what was observed) of the guard's file; findings None when
    it never reported. A file that does not read as the guard writes it was written by someone else:
    the test process shares the folder, so that is a finding, never a crash of the harness."""
    if entry is None:
        return None, None, None
    try:
        report = _GUARD_REPORT.decode(entry.data)
    except (msgspec.DecodeError, RecursionError) as exc:
        if not entry.data and not entry.link:  # cut short before it wrote a byte
            return None, None, None
        return [f"the guard's report was rewritten: it does not read as the guard writes it ({str(exc)[:120]})"], \
            None, None
    # Findings are quoted in a verdict's reason: kept short, whoever wrote them.
    return [finding[:300] for finding in report.findings], report.report_sha256, report.observed


def workspace_of(grading: Grading, nonce: str) -> str:
    """Where the run named `nonce` runs its tests (see `_scratch_copy`)."""
    return f"{SCRATCH_DIR}/{nonce}" if grading.graded else "/workspace"


def run_bounds(grading: Grading, workspace: str, report_at: str) -> dict[str, int]:
    """The size of each place a graded test run may write outside its temporary places: its
    scratch copy holds the graded tree and as much again as the agent's workspace could grow;
    its report folder a little more than the harness reads of it (filled, it reads as too large).
    None where the tests run in the workspace itself (the agent's own sandbox)."""
    if not grading.graded:
        return {}
    room = grading.box.limits.workspace_mb * _MIB
    return {workspace: footprint(grading.graded) + room, report_at: REPORT_MAX_BYTES + _MIB}


def footprint(tree: Tree) -> int:
    """What `tree` takes in a tmpfs, at most: whole pages, and one for each entry."""
    return sum(-(-len(entry.data) // _PAGE) * _PAGE + _PAGE for entry in tree.values())


def _scratch_copy(grading: Grading, nonce: str, restage: dict[str, tuple[Tree, str]], *, kept: bool = True,
                  tree: Tree | None = None) -> str:
    """Where this run's tests run: a fresh copy of the graded tree (the staged files in it),
    written in one go with `restage`; `kept`: it stays after the run (not in a bounded folder,
    released with what the run wrote), so later restages must reach it.

    Graded in the agent's own sandbox (the fresh-container guard off), there is nothing
    to copy from and the tests run in the workspace itself."""
    graded = grading.graded
    if not graded:
        if restage:
            grading.box.put_harness_trees(restage)
        return "/workspace"
    at = f"{SCRATCH_DIR}/{nonce}"
    grading.box.put_harness_trees({**restage, at: (graded if tree is None else tree, ProjectCopy(grading.staged))})
    if kept:
        grading.scratch_copies = [*grading.scratch_copies, at]  # what a later restage must reach
    return at


def _junit(xml_bytes: bytes, canaries: set[str]
           ) -> tuple[int, int, int, int, Canary, list[Case], dict[str, str], dict[str, str]] | None:
    """(tests, failures, errors, skipped, canary outcome, cases, messages, captured) of a JUnit report,
    canaries left out (`messages`, `captured`: see `TestRun`).

    The canary outcome is "failed" when every collected canary failed, "missing" when
    none was collected, else the outcome of one that did not fail.
    """
    try:
        root = ET.fromstring(xml_bytes)
    except ET.ParseError:
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        return None
    tests = failures = errors = skipped = 0
    seen: list[str] = []
    cases: list[Case] = []
    messages: dict[str, str] = {}
    captured: dict[str, str] = {}
    for suite in suites:
        for case in suite.iter("testcase"):
            kinds = {child.tag for child in case}
            # pytest's writer opens a case at its setup and names it only with an outcome: a case without a
            # name is a test whose session ended inside it (pytest.exit raised by the code it called), never
            # one that passed.
            cut_short = case.get("name") is None
            outcome = (CaseOutcome.ERROR if "error" in kinds or cut_short else CaseOutcome.FAILURE if "failure" in kinds
                       else CaseOutcome.SKIPPED if "skipped" in kinds else CaseOutcome.PASSED)
            if case.get("name") in canaries:
                seen.append(outcome)
                continue
            cases.append((case.get("classname") or "", CUT_SHORT if cut_short else case.get("name") or "", outcome))
            raised = case.find(outcome.value) if outcome in FAILING else None  # the element is named as the outcome
            if cut_short:
                messages[f"{cases[-1][0]}::{cases[-1][1]}"] = "the test session ended inside this test (pytest.exit)"
            elif raised is not None:
                text = (raised.text or "").strip()
                message = (raised.get("message") or "").strip()[:MESSAGE_MAX // 3]
                if len(text) > MESSAGE_MAX * 2 // 3:  # the test's own lines, and where it ended
                    text = f"{text[:MESSAGE_MAX // 3]}\n...\n{text[-MESSAGE_MAX // 3:]}"
                messages[f"{cases[-1][0]}::{cases[-1][1]}"] = f"{message}\n{text}".strip()
                printed = "\n".join((c.text or "").strip() for c in case if c.tag in ("system-out", "system-err"))
                if printed.strip():
                    captured[f"{cases[-1][0]}::{cases[-1][1]}"] = printed.strip()[-MESSAGE_MAX:]
            tests += 1
            failures += outcome == CaseOutcome.FAILURE
            errors += outcome == CaseOutcome.ERROR
            skipped += outcome == CaseOutcome.SKIPPED
        if not list(suite.iter("testcase")):  # a report of counts only
            try:
                tests += int(suite.get("tests", "0"))
                failures += int(suite.get("failures", "0"))
                errors += int(suite.get("errors", "0"))
                skipped += int(suite.get("skipped", "0"))
            except ValueError:  # not what a runner writes: the report does not read
                return None
    return tests, failures, errors, skipped, canary_of(seen), cases, messages, captured


#: Closing lines of a runner whose counts include the canary; the verdict states its own counts.
_SUMMARY = re.compile(r"^(\d+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b.*|"
                      r"Ran \d+ tests? in .*|FAILED \(.*\)|OK( \(.*\))?)$")


def _tail(text: str, marks: tuple[str, ...] = (), lines: int = 6) -> str:
    """The last lines worth reading: rules, the report notice, the runner's closing
    counts and anything of the canary's (random, so never twice the same) are left out."""
    kept = [line for line in text.strip().splitlines()
            if line.strip() and not line.startswith(("====", "----", "- generated xml", "-- generated xml"))
            and "generated xml file" not in line and not _SUMMARY.match(line.strip())
            and not any(mark in line for mark in marks)][-lines:]
    return " | ".join(kept)[-600:]
