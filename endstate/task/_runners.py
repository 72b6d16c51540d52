"""Which test runner a task's test graders name, and which of pytest's guards do not reach it.

`tests_pass` and `holdout` run pytest (or unittest) by default, with every guard of the harness.
A task may name another runner for them (`runner = "django"`: Django's `tests/runtests.py`;
`runner = "sympy"`: sympy's `bin/test`; `runner = "tree-pytest"`: pytest's own tree, whose tests run
under the graded tree's pytest). The harness's in-process guards are pytest's, the image's: a plugin
loaded first in the test process, a canary test collected with the task's tests, impossible twins
selected by node id. None of them reaches the process of another runner (nor can be trusted in one
whose pytest is the end state's own), so a task that names one
states, in its grader's arguments, exactly which guards do not apply (`unguarded`): written out,
never implied, and copied onto the run's card. What still applies to every runner: the seal, the
fresh grading container holding the sealed tree alone, held-out tests staged after sealing, the
protected-path and skip-marker graders, the end-state checks, each test process in namespaces of
its own, each id found with the status wanted (`min_tests`), and a canary of the runner's own
(`log_canary`): a test that always fails, staged beside the run's tests and named among its
arguments, which the runner's output must report failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from endstate.errors import ManifestError

__all__ = ["TEST_RUNNERS", "UNGUARDED", "TEST_GRADERS", "unguarded_of", "check_runners"]

#: The guards (names of `endstate.guards.Guards`) that cannot reach each runner's test process:
#: the guard plugin and its canary (`tamper_guard`), impossible twins and their value form, and the
#: wipe between a held-out run's two halves (one run, no halves, without twins).
UNGUARDED: dict[str, tuple[str, ...]] = {
    "pytest": (),
    "django": ("half_isolation", "tamper_guard", "twins", "value_twins"),
    "sympy": ("half_isolation", "tamper_guard", "twins", "value_twins"),
    "tree-pytest": ("half_isolation", "tamper_guard", "twins", "value_twins"),
}
TEST_RUNNERS = tuple(UNGUARDED)
#: The built-in graders that run a task's tests (and so name a runner).
TEST_GRADERS = ("tests_pass", "holdout")


def _test_grader(name: str) -> bool:
    return name.replace(":", ".").rsplit(".", 1)[-1] in TEST_GRADERS and name.startswith("endstate.grading")


def unguarded_of(graders: list[Any]) -> tuple[str, ...]:
    """The guards a task's test graders state do not apply (sorted, each once); () for pytest's."""
    return tuple(sorted({g for spec in graders if _test_grader(spec.name) for g in spec.args.get("unguarded", ())}))


def check_runners(graders: list[Any], path: Path) -> None:
    """A ManifestError naming the file and field when a test grader names a runner there is none
    of, or does not state exactly the guards its runner goes without."""
    for index, spec in enumerate(graders):
        if not _test_grader(spec.name):
            continue
        runner = spec.args.get("runner", "pytest")
        field = f"graders[{index}].args"
        if runner not in UNGUARDED:
            raise ManifestError(f"{path}: field `{field}.runner` is {runner!r}: name one of "
                                f"{', '.join(TEST_RUNNERS)}")
        stated, wanted = spec.args.get("unguarded", []), list(UNGUARDED[runner])
        if not isinstance(stated, list) or sorted(stated) != wanted:
            what = f"unguarded = {wanted!r}".replace("'", '"') if wanted else "no `unguarded`"
            raise ManifestError(f"{path}: field `{field}.unguarded` is {stated!r}, but the {runner} runner goes "
                                f"without exactly these of pytest's guards: write {what} (stated, never implied)")
        tests = spec.args.get("tests")
        if tests is None:
            continue
        if runner == "pytest" and not spec.name.endswith("tests_pass"):  # held-out tests meet twins by id
            raise ManifestError(f"{path}: field `{field}.tests`: pytest's held-out tests are named in the command "
                                "(each meets its twins by node id): leave `tests` out")
        ids = "pytest node ids (`path::name`)" if runner == "pytest" else f"the {runner} runner's test ids"
        if not isinstance(tests, list) or (runner == "pytest" and not tests) or not all(
                isinstance(t, str) and t and (runner != "pytest" or "::" in t) for t in tests):
            raise ManifestError(f"{path}: field `{field}.tests` must be a list of {ids}")
