"""The tests a pytest run is graded on, where the task lists them (`tests`) apart from what it runs.

SWE-bench runs the test files its test patch touches in one pytest process and reads each listed
id's status from that run; the tests of those files it does not list are not looked at. A test's
outcome can depend on what ran before it in the same process (a warning a library gives once per
process, turned into an error by the project's `filterwarnings = error`, falls on whichever test
is first): run by id, apart from the rest of its file, a listed test can meet what SWE-bench's run
gave to another. A task graded that way names the files in its command and the node ids in
`tests`; its verdict counts those ids alone, each of which must be reported.

A node id is matched to a reported case by the file the guard saw the case come from (else by
its JUnit class name), its classes and its name; an id without parameters names every
parametrised case of its function, as pytest selects them.
"""

from __future__ import annotations

from typing import NamedTuple

from endstate.grading._testrun import Case, TestRun

__all__ = ["Listed", "listed_cases"]


class Listed(NamedTuple):
    #: The reported cases the ids name, each once, in the report's order.
    cases: list[Case]
    #: The ids that name no reported case.
    missing: list[str]
    #: How many reported cases the ids do not name (run, not graded).
    others: int


def _parts(node_id: str) -> tuple[str, list[str], str]:
    """(file, classes, name with its parameters) of `path::Class::name[params]` (parameters may hold `::`)."""
    head, bracket, params = node_id.partition("[")
    path, _, rest = head.partition("::")
    names = rest.split("::")
    return path, names[:-1], names[-1] + bracket + params


def _names(node_id: str, case: Case, file: str | None) -> bool:
    path, classes, _ = _parts(node_id)
    scope = case[0].split(".")
    if file is not None:  # the guard saw the file: the class name is the module's then the classes
        stem = path.rsplit("/", 1)[-1].removesuffix(".py")
        return file == path and scope[-len(classes) - 1:] == [stem, *classes]
    return case[0] == ".".join([path.removesuffix(".py").replace("/", "."), *classes])


def listed_cases(run: TestRun, ids: list[str]) -> Listed:
    """The cases of `run` that `ids` (pytest node ids) name, and the ids that name none."""
    by_name: dict[str, list[int]] = {}
    for index, (_, name, _) in enumerate(run.cases):
        by_name.setdefault(name, []).append(index)
        if "[" in name:
            by_name.setdefault(name.partition("[")[0] + "[", []).append(index)
    named: set[int] = set()
    missing = []
    for node_id in ids:
        name = _parts(node_id)[2]
        found = [i for i in by_name.get(name, []) + ([] if "[" in name else by_name.get(name + "[", []))
                 if _names(node_id, run.cases[i], run.files.get(f"{run.cases[i][0]}::{run.cases[i][1]}"))]
        named.update(found)
        if not found:
            missing.append(node_id)
    return Listed([run.cases[i] for i in sorted(named)], missing, len(run.cases) - len(named))

