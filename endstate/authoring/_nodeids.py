"""A dataset's pytest node ids, as the task image's pytest names the same tests.

A SWE-bench instance lists its tests by the node ids the dataset's own pytest printed. The
task image's pytest may name a parametrised case otherwise (how it escapes a byte or a
non-ASCII character, how it joins the parameters), and ids read back from logs lose what
follows a space. One missing id is not a small thing: pytest then runs nothing at all.

`collected_ids` runs the test files the ids name on the solution, held-out tests staged, the
way grading runs them, and reads each case's id back from the report; `match_ids` maps each
dataset id onto one of those: the same id, else the only one equal once escapes, quotes and
punctuation in its parameters are set aside, else those it is the cut-off start of, else (an id
that names a case by its parameter's name and index, `[payload3]`) the case at that index; an id
whose parameter held the clock of the dataset's run is the one case no other id names of the same
shape, digits set aside; ids of one test still unmatched are paired in order with its cases no id
names, where as many are left. An id that maps onto none is an error naming it with the nearest
ids that exist (the cases of its own test first).
"""

from __future__ import annotations

import datetime
import difflib
import re
from collections.abc import Callable, Collection
from pathlib import Path

from endstate.authoring._offline import network_host
from endstate.authoring._testcommand import COUNT_TIMEOUT_S
from endstate.errors import UserError
from endstate.grading import FAILING, Case, CaseOutcome

__all__ = ["match_ids", "collected_ids", "holds_the_clock", "with_whole_tests", "in_collected_order", "not_found_error", "NodeIdsNotFound", "whole_files", "COMMAND_MAX",
           "reported_ids", "error_line"]

#: The longest test command a sandbox can be given: Linux caps one argument at 128 KiB (MAX_ARG_STRLEN),
#: and the command is one argument of `bash -c`. A margin is left for the rest of the command.
COMMAND_MAX = 120 * 1024


class NodeIdsNotFound(UserError):
    """Node ids of the dataset that name no test the task's image collects."""


def _loose(node_id: str) -> str:
    """The id with its parameters reduced to letters and digits (escapes decoded first)."""
    base, bracket, params = node_id.partition("[")
    if not bracket:
        return node_id
    try:
        params = params.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        pass
    return base + "[" + "".join(ch for ch in params if ch.isalnum())


def match_ids(wanted: list[str], collected: list[str], claimed: Collection[str] = ()) -> tuple[dict[str, list[str]],
                                                                                        list[str]]:
    """(dataset id -> the collected ids it names, for each that names any; the ids that name none).
    An id names one test, except an id cut off at a space that starts several: SWE-bench's log
    parser cuts ids there, so the dataset's one id stands for all of them, and all are run.
    `claimed`: ids the instance names elsewhere (its other list), which no id here is paired with."""
    have = set(collected)
    loose: dict[str, list[str]] = {}
    for node_id in collected:
        loose.setdefault(_loose(node_id), []).append(node_id)
    mapped, missing = {}, []
    for node_id in wanted:
        if node_id in have:
            mapped[node_id] = [node_id]
            continue
        same = loose.get(_loose(node_id), [])
        cut = [c for c in collected if "[" in node_id and not node_id.endswith("]") and c.startswith(node_id)]
        found = same if len(same) == 1 else cut or _by_index(node_id, collected)
        if found:
            mapped[node_id] = found
        else:
            missing.append(node_id)
    taken = {c for found in mapped.values() for c in found} | _named_by(claimed, collected)
    for node_id in missing:
        found = _by_shape(node_id, [c for c in collected if c not in taken])
        if found:
            mapped[node_id] = found
            taken.update(found)
    missing = [node_id for node_id in missing if node_id not in mapped]
    return mapped, _pair_the_rest(missing, collected, mapped, {*claimed, *wanted})


def _named_by(ids: Collection[str], collected: list[str]) -> set[str]:
    """The collected ids that `ids` (of the instance's other list) name as they are, or cut off at a space."""
    have = set(collected)
    named = {i for i in ids if i in have}
    cut = [i for i in ids if "[" in i and not i.endswith("]") and i not in have]
    return named | {c for c in collected for i in cut if c.startswith(i)}


def _shape(params: str) -> str:
    return re.sub(r"\d", "0", params)


def _by_shape(node_id: str, free: list[str]) -> list[str]:
    """For a case whose parameter held the clock or the date of the dataset's run (marshmallow's
    `test_invalid_datetime_deserialization[15:11:18` from `datetime.now().strftime("%H:%M:%S %Y-%m-%d")`),
    the one case of that test no other id names whose parameter has the same shape, digits set aside
    (as the dataset's id, or as its start where the id was cut at a space); none where not exactly one."""
    base, bracket, params = node_id.partition("[")
    if not bracket or not re.search(r"\d", params):
        return []
    cut = not params.endswith("]")
    shape = _shape(params)
    found = [c for c in free if c.startswith(base + "[")
             and (_shape(c[len(base) + 1:]).startswith(shape) if cut else _shape(c[len(base) + 1:]) == shape)]
    return found if len(found) == 1 else []


def _pair_the_rest(missing: list[str], collected: list[str], mapped: dict[str, list[str]],
                   claimed: set[str]) -> list[str]:
    """Pair, in order, the cases of one test whose ids held where the dataset was made (a path of its
    machine: requests' `test_unzipped_paths_unchanged[/venv/.../pytest/__init__.py]`) with the cases the
    image collects of that test that no other id names, where there are as many of each; the ids still
    missing."""
    taken = claimed | {c for found in mapped.values() for c in found}
    by_test: dict[str, list[str]] = {}
    for node_id in missing:
        if "[" in node_id:
            by_test.setdefault(node_id.split("[", 1)[0], []).append(node_id)
    for test, ids in by_test.items():
        free = [c for c in collected if c.startswith(test + "[") and c not in taken]
        if len(free) == len(ids):
            mapped.update({node_id: [case] for node_id, case in zip(ids, free)})
    return [node_id for node_id in missing if node_id not in mapped]


def _by_index(node_id: str, collected: list[str]) -> list[str]:
    """For `test[payload3]`, the name pytest gives the fourth case of a one-parameter parametrize where it
    does not show the value (newer pytests give up a value of an over-long id so): the fourth case
    the image collects of that test, where it collects at least four."""
    base, bracket, params = node_id.partition("[")
    match = re.fullmatch(r"[A-Za-z_]\w*?(\d+)\]", params) if bracket else None
    if not match:
        return []
    cases = [c for c in collected if c.startswith(base + "[")]
    index = int(match[1])
    return [cases[index]] if index < len(cases) else []


def holds_the_clock(node_id: str, now: datetime.datetime) -> bool:
    """Whether a case's id holds the date or the time of the run that collected it (`now`, give or take
    a quarter of an hour): such an id is never collected again, so the case can only be run as part of
    its whole test (marshmallow parametrises by `datetime.now().strftime(...)`)."""
    params = node_id.partition("[")[2]
    if not params:
        return False
    days = {f"{d:%Y-%m-%d}" for d in (now, now - datetime.timedelta(minutes=15), now + datetime.timedelta(minutes=15))}
    dates = {f"{y}-{m}-{d}" for y, m, d in (x.split("-") for x in days)}
    dates |= {f"{m}-{d}-{y}" for y, m, d in (x.split("-") for x in days)} | {f"{d}-{m}-{y}" for y, m, d in
                                                                            (x.split("-") for x in days)}
    if any(date in params or date.replace("-", "/") in params for date in dates):
        return True
    for hours, minutes, seconds in re.findall(r"(?<!\d)(\d\d):(\d\d):(\d\d)(?!\d)", params):
        of_day = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
        now_of_day = now.hour * 3600 + now.minute * 60 + now.second
        if min(abs(of_day - now_of_day), 86400 - abs(of_day - now_of_day)) <= 900:
            return True
    return False


def with_whole_tests(ids: list[str], collected: list[str], varying: Collection[str]) -> list[str]:
    """`ids` plus every case of each test one of them names by an id in `varying` (one that holds the
    clock): run as the whole test, which its own id names, in the order pytest collects."""
    tests = {node_id.split("[", 1)[0] for node_id in ids if node_id in varying}
    return in_collected_order(ids + [c for c in collected if c.split("[", 1)[0] in tests], collected)


def in_collected_order(ids: list[str], collected: list[str]) -> list[str]:
    """`ids` (each a collected id) once each, in the order pytest collected them."""
    order = {node_id: index for index, node_id in reversed(list(enumerate(collected)))}
    return sorted(dict.fromkeys(ids), key=order.__getitem__)


def whole_files(ids: list[str], collected: list[str]) -> list[str]:
    """`ids` with each file whose every collected test they name given as the file alone, and each test
    whose every case they name as the test alone: the same tests, in a command short enough for a
    sandbox (an instance can list thousands of ids), and never naming a case by a value that changes
    from run to run (requests parametrises by `__file__`, which is each run's scratch copy)."""
    by_file: dict[str, set[str]] = {}
    by_test: dict[str, set[str]] = {}
    for node_id in collected:
        by_file.setdefault(node_id.split("::", 1)[0], set()).add(node_id)
        by_test.setdefault(node_id.split("[", 1)[0], set()).add(node_id)
    named = set(ids)
    whole = {file for file, have in by_file.items() if have <= named}
    every_case = {test for test, have in by_test.items() if have <= named}
    shortened = []
    for node_id in ids:
        file, test = node_id.split("::", 1)[0], node_id.split("[", 1)[0]
        shortened.append(file if file in whole else test if test in every_case else node_id)
    return list(dict.fromkeys(shortened))


def not_found_error(missing: list[str], collected: list[str], field: str, why: str = "") -> NodeIdsNotFound:
    """The error for ids that name no collected test: each (the first three) with its nearest ids."""
    shown, explained = [], set()
    for node_id in missing[:3]:
        cases = [c for c in collected if c.startswith(node_id.split("[", 1)[0] + "[")] if "[" in node_id else []
        near = difflib.get_close_matches(node_id, cases, n=3, cutoff=0) or \
            difflib.get_close_matches(node_id, collected, n=3, cutoff=0.5)
        file = node_id.split("::", 1)[0]
        if file in explained:
            hint = f"nor of {file}"
        elif not any(c.startswith(file + "::") for c in collected):
            hint = f"no test of {file} was collected" + (f" ({_error_lines(why)})" if why else "")
            explained.add(file)
        else:
            hint = "nearest: " + ", ".join(near) if near else "nothing near it"
        shown.append(f"{node_id} ({hint})")
    more = f", and {len(missing) - 3} more" if len(missing) > 3 else ""
    return NodeIdsNotFound(f"field `{field}`: {len(missing)} node id(s) name no test the task's image collects: "
                           + "; ".join(shown) + more)


#: A line that says which exception was raised (`E   ModuleNotFoundError: No module named 'x'`, or a
#: conftest's unprefixed `ImportError: Error importing plugin "...": No module named 'pkg_resources'`).
_RAISED = re.compile(r"(?:E\s+)?((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Warning)(?::\s.*)?)")


def error_line(report: str) -> str:
    """What a failed test's report (`TestRun.messages`) says was raised, in one line: its last line that
    names an exception other than a warning, else its first line (pytest's message: `assert 1 == 2`)."""
    raised = [m[1].strip() for line in report.splitlines() if (m := _RAISED.fullmatch(line.strip()))]
    errors = [line for line in raised if not line.split(":", 1)[0].endswith("Warning")]
    first = report.strip().splitlines()[0] if report.strip() else ""
    return " ".join((errors[-1] if errors else first).split())[:300]


def _error_lines(tail: str) -> str:
    """What a run's last lines say went wrong: its last line that names a raised exception (a warning
    only where nothing else is named), else its lines from pytest's first `E   ` line, else the errors of
    pytest's short summary (`ERROR file - Exception: ...`: a tail cut past the `E` line), else its last 300
    characters. A collection error's cause, not the traceback's frames before it nor a warning the project
    logs after it (the output's lines are joined by ` | ` or newlines)."""
    raised = [m[1].strip() for line in re.split(r"\n| \| ", tail) if (m := _RAISED.fullmatch(line.strip()))]
    errors = [line for line in raised if not line.split(":", 1)[0].endswith("Warning")]
    if errors:
        return errors[-1][:300]
    at = tail.find("E   ")
    if at >= 0:
        return tail[at:][-300:]
    summary = re.findall(r"(?:^| \| |\n)(ERROR \S+ - .+?)(?= \| |\n|$)", tail)
    return (" | ".join(summary[:2]) if summary else tail)[-300:]


def _node_id(classname: str, name: str, file: str) -> str:
    """A report case's node id: its file, then the classes the report's classname holds past the module."""
    module = file.removesuffix(".py").replace("/", ".")
    classes = classname[len(module):].lstrip(".").split(".") if classname.startswith(module) else []
    return "::".join([file, *filter(None, classes), name])


def collected_ids(folder: Path, holdout: dict, command: str, backend: str, image: str,
                  log: Callable[[str], None] = lambda line: None) -> tuple[list[str], set[str], str, dict[str, str]]:
    """(every test id `command` reports on the task's solution with `holdout` staged, the ids of those
    that ran and were not skipped, the run's last output lines, and id -> what its report says was
    raised for each that failed or errored there), run the way grading runs them."""
    from endstate.grading import Grader, prepare_grading_sandbox, run_tests, seal_overlay, stage_holdout, tests_pass
    from endstate.task import load_task, task_sandbox

    task = load_task(folder)
    where = task_sandbox(task, backend, image, log=log)
    # The run only names the tests, and its last lines are what explains a file that cannot be collected:
    # pytest's warnings summary, printed after the error, would push the error's own lines out of them.
    command += " --disable-warnings"
    # What a failing test printed, in its report: sphinx logs an image it could not fetch, then fails an
    # assertion on the page, and only the log says it was the network (pytest before 3.5 writes it anyway).
    # Passing tests' too: pytest writes a failed test's teardown output (sphinx's log) only with theirs.
    command += " -o junit_logging=system-out"
    with prepare_grading_sandbox(backend, where.image, where.limits, f"ids-{task.id}") as box:
        grading = seal_overlay(task.solution(), task.fixture(), box)
        stage_holdout(grading, holdout, [Grader("endstate.grading:tests_pass", tests_pass, {"command": command})])
        log(f"collecting node ids: {command}")
        run = run_tests(grading, command, timeout=COUNT_TIMEOUT_S)
    failed = {_node_id(c, n, run.files[f"{c}::{n}"]): _with_network_lines(run.messages.get(f"{c}::{n}", ""),
                                                                            run.captured.get(f"{c}::{n}", ""))
              for c, n, outcome in run.cases if outcome in FAILING and run.files.get(f"{c}::{n}")}
    return (*reported_ids(run.cases, run.files), run.output_tail, failed)


def _with_network_lines(message: str, printed: str) -> str:
    """What a failed test's report says was raised, and, where that names no network failure but what
    the test printed does, the first line that does."""
    if network_host(message) is not None:
        return message
    lines = [line.strip() for line in printed.splitlines() if network_host(line)]
    return f"{message}\n{lines[0]}" if lines else message


def reported_ids(cases: list[Case], files: dict[str, str]) -> tuple[list[str], set[str]]:
    """(the node id of each test a report names, those that ran and were not skipped). A file that
    could not be collected (an ImportError) is reported as an error with no class (`classname=""`,
    the module's dotted name as its name): not a test, so its ids are said to have no test collected."""
    ids, ran = [], set()
    for classname, name, outcome in cases:
        file = files.get(f"{classname}::{name}")
        if not file or not re.search(r"\.py$", file) or (not classname and outcome == CaseOutcome.ERROR):
            continue
        node_id = _node_id(classname, name, file)
        ids.append(node_id)
        if outcome != CaseOutcome.SKIPPED:
            ran.add(node_id)
    return ids, ran
