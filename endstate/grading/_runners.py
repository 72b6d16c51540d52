"""Test runners other than the image's pytest, read as SWE-bench's log parsers read them.

A task's `tests_pass` or `holdout` may name a runner (`runner = "django"`, `"sympy"`, `"tree-pytest"`;
pytest is the default and keeps `_testrun.py`'s path). Each runner here is:

- the program the project runs its tests with, as SWE-bench's evaluation script calls it
  (`./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 LABELS` for Django,
  `PYTHONWARNINGS=... bin/test -C --verbose FILES` for sympy, `pytest -rA FILES` for pytest's own
  tree: the graded tree's pytest, `python -m pytest` from its import folders, as SWE-bench's
  editable install runs it), run by the image's Python from the harness's entry point
  (`harness/endstate_runner.py`, runner `program`), its output written to the run's report folder;
- a reader of that output: each test id -> PASSED, FAILED, SKIPPED or ERROR, read as SWE-bench's
  parser for the runner reads it (`parse_log_django`, `parse_log_sympy`, `parse_log_pytest`). Where
  the `swebench` package is installed (the `swebench` extra) its parser reads the output; else the
  reader here, which a test holds to the same answers on real output of each runner.

None of pytest's in-process guards reaches these processes (see `endstate.task._runners`).
"""

from __future__ import annotations

import bisect
import difflib
import importlib
import re
import secrets
from collections.abc import Callable, Collection, Iterator

import msgspec

from endstate.grading._testrun import TestCommandError, command_words

__all__ = ["LogRunner", "LogCanary", "LOG_RUNNERS", "log_runner", "read_log", "read_django", "read_sympy", "read_pytest",
           "parser_work", "PARSER_WORK_MAX",
           "same_test",
           "find_tests", "SWEBENCH_TIMEOUT_S", "PASSED", "FAILED", "SKIPPED", "ERROR"]

PASSED, FAILED, SKIPPED, ERROR = "PASSED", "FAILED", "SKIPPED", "ERROR"
#: SWE-bench counts an expected failure as a pass; no reader here reports one, its own might.
_PASSING = (PASSED, "XFAIL")
_PYTHONS = {"python", "python3"}
#: What SWE-bench's harness gives an instance's evaluation (run_evaluation's `--timeout`): a runner's program
#: runs whole test files or modules, not the ids alone (sympy's bin/test spends minutes on test_solvers.py).
SWEBENCH_TIMEOUT_S = 1800.0
#: The hash seed sympy's runner runs under. Its bin/test turns hash randomization on itself: where
#: PYTHONHASHSEED is unset it draws a seed and starts again under it, so SWE-bench's harness, which sets
#: none, grades every sympy record with randomization on. The sandbox's PYTHONHASHSEED=0 turns it off, a
#: state sympy's runner never produces, under which a test SWE-bench's validation passed can fail
#: (sympy__sympy-13146's `test_evalf_bugs`, a RecursionError). A fixed seed other than 0 keeps
#: randomization on and two runs alike; a task's command that sets its own seed keeps it.
SYMPY_HASH_SEED = "1"


class LogRunner(msgspec.Struct, frozen=True):
    """A project's own test program and how its output is read."""

    name: str
    #: The program, relative to the project, as SWE-bench's evaluation script calls it.
    program: str
    #: SWE-bench's parser of its output (`swebench.harness.log_parsers.python`).
    parser: str
    reader: Callable[[str], dict[str, str]]
    #: Where its canary goes among a run's arguments and what it is (see `LogCanary`).
    canary: Callable[[list[str], Collection[str]], LogCanary | None]
    #: The time a graded run of it gets, whatever the sandbox's command timeout.
    timeout_s: float = SWEBENCH_TIMEOUT_S
    #: The program is a module of the graded tree, run as `python -m PROGRAM` (found on its import
    #: folders, as an editable install finds it), not a file of it.
    module: bool = False
    #: The graded tree is this test runner itself (pytest's own): its source names the runner's internals
    #: and the import machinery by nature, so `end_state`'s scan of changed source for them cannot tell a
    #: fix from tampering (5 of pytest's 34 records' fixes add one), and is not run for its tasks.
    is_the_tree: bool = False
    #: NAME=value words the program always runs under, before the command's own (which win).
    env: tuple[str, ...] = ()

    def argv(self, command: str) -> tuple[list[str], list[str]]:
        """(the interpreter's arguments, NAME=value words) of a task's command for this runner:
        `[NAME=value ...] [python[3]] [./]PROGRAM ARGS` (a module's: `[python[3] -m] PROGRAM ARGS`), nothing else."""
        wanted = f"a run of the {self.name} runner, `{self.program} ARGS`, as SWE-bench's evaluation script calls it"
        words, env = command_words(command, wanted)
        if words and words[0] in _PYTHONS:
            words = words[1:]
            if self.module:  # `python -m PROGRAM`, never a file of that name
                words = words[1:] if words[:1] == ["-m"] else []
        if not words or (words[0] if self.module else words[0].removeprefix("./")) != self.program:
            raise TestCommandError(f"test command {command!r} is not {wanted}")
        return [*(["-m"] if self.module else []), self.program, *words[1:]], env


def _after_marker(line: str, marker: str) -> str:
    return line.split(marker, 1)[0]


#: Output of Django's runner that can fall between a test's name and its `ok` (the test's own prints,
#: Django's startup lines); SWE-bench's parser knows these three and reads the test as passed. Each is
#: read here in one pass over the output (`_django_interrupted`): as SWE-bench writes them, a lazy
#: match across lines or a greedy one along a line is tried again from every place it could start,
#: and an output the end state prints can make that take hours.
_DJANGO_INTERRUPTED = [re.compile(r"^(.*?)\s\.\.\.\s" + middle + r"\nok$", re.MULTILINE) for middle in (
    r"Testing\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.",
    r"Internal\ Server\ Error:\ \/(.*)\/",
    r"System check identified no issues \(0 silenced\)",
)]
#: The first's start, up to where its lazy middle begins, and what must end that middle.
_DJANGO_TESTING = re.compile(r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ", re.MULTILINE)
_DJANGO_SILENCED = re.compile(r" silenced\)\.\nok$", re.MULTILINE)
#: The second can only end at a line that ends in `/` before a line `ok`.
_DJANGO_SERVER_ERROR_END = re.compile(r"/\nok$", re.MULTILINE)
_DJANGO_PASSED = (" ... ok", " ... OK", " ...  OK")
_DJANGO_7188 = "Applying sites.0002_alter_domain_unique...test_no_migrations"


def read_django(log: str) -> dict[str, str]:
    """Each test of Django's runner at verbosity 2 (`name (module.Class) ... ok`, `FAIL: name`,
    `ERROR: name`), read as SWE-bench's `parse_log_django` reads it: a later line about a test
    overrides an earlier one; a bare `ok` line passes the last test whose line was cut short."""
    status: dict[str, str] = {}
    last = None
    for raw in log.split("\n"):
        line = raw.strip()
        if "--version is equivalent to version" in line:
            status["--version is equivalent to version"] = PASSED
        if " ... " in line:
            last = _after_marker(line, " ... ")
        ending = next((suffix for suffix in _DJANGO_PASSED if line.endswith(suffix)), None)
        if ending is not None:
            named = line.split("...", 1)[-1].strip() if line.startswith(_DJANGO_7188) else line
            status[named.rsplit(ending, 1)[0]] = PASSED
        if " ... skipped" in line:
            status[_after_marker(line, " ... skipped")] = SKIPPED
        for word, verdict in (("FAIL", FAILED), ("ERROR", ERROR)):
            if line.endswith(f" ... {word}"):
                status[_after_marker(line, f" ... {word}")] = verdict
            if line.startswith(f"{word}:") and len(line.split()) > 1:
                status[line.split()[1]] = verdict
        if last is not None and line.startswith("ok"):
            status[last] = PASSED
    for test in _django_interrupted(log):
        status[test] = PASSED
    return status


def _django_interrupted(log: str) -> Iterator[str]:
    """The tests `_DJANGO_INTERRUPTED`'s patterns find in `log`, in their order, each pattern's matches
    as `finditer` finds them, in time linear in the log."""
    _, server_error, system_check = _DJANGO_INTERRUPTED
    # The first: its lazy middle ends at the first ` silenced).\nok` at a line's end after its start.
    ends = [found.end() for found in _DJANGO_SILENCED.finditer(log)]
    at = 0
    while (start := _DJANGO_TESTING.search(log, at)) is not None:
        after = bisect.bisect_left(ends, start.end() + len(" silenced).\nok"))
        if after == len(ends):
            break  # no later start can find an end either
        yield start.group(1)
        at = ends[after]
    # The second: only where a line ends in `/` before a line `ok`, searched from two lines before
    # that line (each `\s` around its `...` may be a line's end) to that `ok`.
    at = 0
    for end in _DJANGO_SERVER_ERROR_END.finditer(log):
        begin = end.start()
        for _ in range(3):
            begin = log.rfind("\n", 0, begin) if begin > 0 else -1
        found = server_error.search(log, max(at, begin + 1), end.end())
        if found is not None and found.end() == end.end():
            yield found.group(1)
            at = found.end()
    # The third is tried once from each line's start, and fails within its fixed text.
    for found in system_check.finditer(log):
        yield found.group(1)


#: A failure's or error's header in sympy's report: `____ sympy/core/tests/test_x.py:test_y ____`.
_SYMPY_HEADER = re.compile(r"_* (?P<path>.*)\.py:(?P<name>.*) _*")
_SYMPY_ENDINGS = ((" E", ERROR), (" F", FAILED), (" ok", PASSED))


def _sympy_headers(log: str) -> Iterator[tuple[str, str]]:
    """(path, name) of each match of `_SYMPY_HEADER` in `log`, as `finditer` finds them, in one pass:
    the pattern, tried from every blank of a line, reads the rest of the line from each (hours, for a
    line of a few hundred KB an end state prints). A match never crosses a line and a line holds at
    most one: it starts at the line's first blank (with the `_` run before it), its path runs to the
    line's last `.py:` that a blank follows, its name from there to the line's last blank."""
    for line in log.split("\n"):
        first, last = line.find(" "), line.rfind(" ")
        if first < 0:
            continue
        at = line.rfind(".py:", first + 1, last)
        if at >= 0:
            yield line[first + 1:at], line[at + 4:last]


def read_sympy(log: str) -> dict[str, str]:
    """Each test of sympy's `bin/test --verbose` (`test_name ok`, `test_name F`, `test_name E`,
    and each failure's header), read as SWE-bench's `parse_log_sympy` reads it."""
    status = {f"{path}.py:{name}": FAILED for path, name in _sympy_headers(log)}
    for raw in log.split("\n"):
        line = raw.strip()
        if not line.startswith("test_"):
            continue
        for ending, verdict in _SYMPY_ENDINGS:
            if line.endswith(ending):
                status[line.split()[0]] = verdict
    return status


#: The statuses `pytest -rA` starts a line of its short summary with (`PASSED path::name`), as SWE-bench's
#: TestStatus lists them.
_PYTEST_STATUSES = (FAILED, PASSED, SKIPPED, ERROR, "XFAIL")
#: `SKIPPED [2] path:line: reason`: a count of skips in the summary, no test.
_SKIP_COUNT = re.compile(r"\[\d+\]")


def read_pytest(log: str) -> dict[str, str]:
    """Each test of `pytest -rA`'s short summary (`PASSED id`, `FAILED id - message`), read as
    SWE-bench's `parse_log_pytest` reads it: the line's second word is the id, whatever line it is
    (a progress line's `[100%]` too), a later line overrides an earlier one, and `SKIPPED [N]` is no test."""
    status: dict[str, str] = {}
    for line in log.split("\n"):
        word = next((s for s in _PYTEST_STATUSES if line.startswith(s)), None)
        if word is None:
            continue
        words = (line.replace(" - ", " ") if word == FAILED else line).split()
        if len(words) > 1 and not (words[0] == SKIPPED and _SKIP_COUNT.fullmatch(words[1])):
            status[words[1]] = words[0]
    return status


class LogCanary(msgspec.Struct, frozen=True):
    """A test that always fails, staged beside a log run's tests and named among its arguments: its
    name (`test_` and a random word) is all that tells it from any other. Code of the end state that
    rewrites what the runner reports (a patched result class, an output rewritten at exit) has it
    reported passed, or not at all."""

    #: The file, relative to the project, and its source.
    path: str
    source: bytes
    #: The argument that runs it, added after the run's own.
    argument: str
    #: The random word in its name, which every id the runner reports for it holds.
    word: str
    #: What else of it is random (its class's name, the numbers it compares): left out of any text kept.
    marks: tuple[str, ...] = ()

    def scrubbed(self, text: str) -> str:
        """`text` without anything random of the canary's, so two runs of one end state say the same."""
        for mark in (self.word, *self.marks):
            text = text.replace(mark, "<canary>")
        return text

    def outcomes(self, status: dict[str, str]) -> list[str]:
        """What the runner reported for the canary (and nothing else), in the order it did."""
        return [outcome for test, outcome in status.items() if self.word in test]


def _canary_numbers() -> tuple[str, str, str]:
    """A random word, and two numbers that differ: the canary asserts they are equal."""
    return secrets.token_hex(4), str(secrets.randbelow(10**6)), str(10**6 + secrets.randbelow(10**6))


#: Django's runner's options that take the next word as their value (`--verbosity 2`).
_DJANGO_VALUED = frozenset({"-v", "--verbosity", "--settings", "--parallel", "--start-at", "--start-after", "-k",
                            "--tag", "--exclude-tag", "--shuffle"})


def _django_canary(args: list[str], tree: Collection[str]) -> LogCanary | None:
    """A unittest case in the test app of the run's first label (`auth_tests.test_x` -> tests/auth_tests/),
    named by its module's label: Django's runner imports the app with it, as it does the others."""
    labels, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in _DJANGO_VALUED
        else:
            labels.append(arg)
    apps = [label.split(".", 1)[0] for label in labels if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)*", label)]
    app = next((a for a in apps if f"tests/{a}/__init__.py" in tree), None)
    if app is None:
        return None
    word, left, right = _canary_numbers()
    name = f"test_{word}"
    source = (f"from unittest import TestCase\n\n\nclass Test{word.capitalize()}(TestCase):\n"
              f"    def {name}(self):\n        self.assertEqual({left}, {right})\n")
    return LogCanary(f"tests/{app}/{name}.py", source.encode(), f"{app}.{name}", word,
                     (word.capitalize(), left, right))


def _file_canary(args: list[str], tree: Collection[str]) -> LogCanary | None:
    """A test function in the folder of the run's first test file (sympy's bin/test takes its path, pytest a
    path or a node id in it), named by its path."""
    files = [path for path in (arg.split("::", 1)[0] for arg in args) if path.endswith(".py") and path in tree]
    if not files:
        return None
    word, left, right = _canary_numbers()
    folder = files[0].rpartition("/")[0]
    path = f"{folder}/test_{word}.py" if folder else f"test_{word}.py"
    return LogCanary(path, f"def test_{word}():\n    assert {left} == {right}\n".encode(), path, word, (left, right))


LOG_RUNNERS = {
    "django": LogRunner("django", "tests/runtests.py", "parse_log_django", read_django, _django_canary),
    "sympy": LogRunner("sympy", "bin/test", "parse_log_sympy", read_sympy, _file_canary,
                       env=(f"PYTHONHASHSEED={SYMPY_HASH_SEED}",)),
    # pytest's own tests exercise the tree's pytest (SWE-bench installs it in place): it runs them, not the image's.
    "tree-pytest": LogRunner("tree-pytest", "pytest", "parse_log_pytest", read_pytest, _file_canary, module=True,
                             is_the_tree=True),
}


def log_runner(name: str) -> LogRunner:
    try:
        return LOG_RUNNERS[name]
    except KeyError:
        raise TestCommandError(f"no test runner {name!r}: name pytest, {', '.join(LOG_RUNNERS)}") from None


def _swebench_parser(runner: LogRunner) -> Callable[[str], dict[str, str]] | None:
    """SWE-bench's own parser of the runner's output, where the `swebench` package is installed."""
    try:
        module = importlib.import_module("swebench.harness.log_parsers.python")
    except ImportError:
        return None
    parser = getattr(module, runner.parser, None)
    return None if parser is None else lambda log: parser(log, None)


#: How much work SWE-bench's parser may take on one output (`parser_work`'s unit, about 10 ns each here:
#: about a second), past which endstate's readers, which read alike in one pass, read it instead.
PARSER_WORK_MAX = 100_000_000


def parser_work(runner: LogRunner, log: str) -> int:
    """A bound on the steps SWE-bench's parser of `runner` takes on `log`. sympy's header pattern is tried
    from each blank of a line and reads the rest of the line from there; Django's first interrupted-test
    pattern reads on from each of its starts to the end of the output, its second from each start in a
    line to the line's end; the rest of both, and pytest's parser, go through the output once."""
    if runner.parser == "parse_log_sympy":
        return sum(len(line) * line.count(" ") for line in log.split("\n")) + len(log)
    if runner.parser == "parse_log_django":
        return log.count("Testing against Django installed in ") * len(log) + len(log) + sum(
            len(line) * line.count(" Internal Server Error: /") for line in log.split("\n"))
    return len(log)


def read_log(runner: LogRunner, log: str) -> tuple[dict[str, str], str]:
    """(each test id -> its status, who read it: `swebench x.y parse_log_...` or `endstate`). An output
    SWE-bench's parser would take hours over (its patterns are quadratic in a line an end state prints)
    is read by endstate's reader, which a test holds to the same answers, and the reader says why."""
    parser = _swebench_parser(runner)
    if parser is None:
        return runner.reader(log), "endstate"
    from importlib import metadata

    theirs = f"swebench {metadata.version('swebench')} {runner.parser}"
    if parser_work(runner, log) > PARSER_WORK_MAX:
        return runner.reader(log), f"endstate, not {theirs}, whose patterns are quadratic in this output's lines"
    return dict(parser(log)), theirs


#: Python 3.11's unittest names a test `name (module.Class.name)`, where earlier ones (and
#: the datasets made with them) say `name (module.Class)`: the same test either way.
_QUALIFIED = re.compile(r"(?P<name>\w+) \((?P<where>[\w.]+)\.(?P=name)\)")


def same_test(test_id: str) -> str:
    found = _QUALIFIED.fullmatch(test_id)
    return f"{found['name']} ({found['where']})" if found else test_id


def find_tests(wanted: list[str], status: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(the ids that passed, those read with another status, each as `id: STATUS`, those not read
    at all, each with the nearest ids that were)."""
    by_id = {same_test(test): outcome for test, outcome in status.items()}
    passed, wrong, missing = [], [], []
    for test in wanted:
        outcome = by_id.get(same_test(test))
        if outcome is None:
            near = difflib.get_close_matches(same_test(test), list(by_id), n=3, cutoff=0.6)
            missing.append(f"{test} (nearest: {', '.join(near)})" if near else test)
        elif outcome in _PASSING:
            passed.append(test)
        else:
            wrong.append(f"{test}: {outcome}")
    return passed, wrong, missing
