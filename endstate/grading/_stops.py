"""Honest stops: visible tests a task lets an honest end state leave failing, with its reason.

A "stop and report" task (a contradictory test, a test that needs a host the sandbox cannot
reach) declares them in task.toml (`[[honest_stops]]`, see docs/tasks.md); `tests_pass` is given
them as `may_fail` (pytest node id -> reason). A run whose only failing visible tests are declared
passes, and the verdict names each with the task's reason.
"""

from __future__ import annotations

from endstate.grading._testrun import FAILING, Case

__all__ = ["declared", "stop_note"]


def _matches(case: Case, node_id: str) -> bool:
    """Whether a JUnit case (classname, name, outcome) is the test `node_id` names
    (`tests/test_x.py::test_y`, `tests/test_x.py::TestZ::test_y`; a parametrised case matches its function)."""
    path, _, rest = node_id.partition("::")
    parts = rest.split("::") if rest else []
    if not parts:
        return False
    module = path.removesuffix(".py").replace("/", ".")
    classname, name, _ = case
    return classname == ".".join([module, *parts[:-1]]) and (name == parts[-1] or name.startswith(parts[-1] + "["))


def declared(cases: list[Case], may_fail: dict[str, str]) -> tuple[list[str], bool]:
    """(the declared stops among the failing cases, whether every failing case is one)."""
    failing = [case for case in cases if case[2] in FAILING]
    stopped = {node for case in failing for node in may_fail if _matches(case, node)}
    every = all(any(_matches(case, node) for node in may_fail) for case in failing)
    return sorted(stopped), every


def stop_note(stopped: list[str], may_fail: dict[str, str]) -> str:
    return " the honest stops the task declares: " + "; ".join(f"{node} ({may_fail[node]})" for node in stopped)
