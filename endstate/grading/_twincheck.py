"""`tasks check`'s proof that a task's impossible twins are sound: every candidate twin
fails on `solution/`, and a graded run carries at least MIN_TWINS of them.

Every way a held-out test can be turned (see `_twins.py`) is written, as a copy of the
test under its own name (`test_x__twin_2`), next to the test in its file; the held-out
command runs them all once against the solution, in a grading sandbox with twins off.
A copy that does not fail where its original passes is a twin a graded run could draw
and an honest end state would pass: the check fails, naming the test. Fewer than
MIN_TWINS twins per run is said on the row (a task made from one upstream regression
test has one) without failing it.

A graded run's twin keeps its original's file and name, so a command that selects tests
by node id (`tests/test_x.py::T::test_y`, `test_x.T.test_y`) runs its twins too; the copies
here have names of their own, so the command that validates them selects each copy
beside the node id that selects its original (`validation_command`).
"""

from __future__ import annotations

import shlex

from endstate.grading._joint import joint_of, split_run
from endstate.grading._resolve import Grader
from endstate.grading._state import Grading
from endstate.grading._testrun import FAILING, CaseOutcome, parse_test_command, run_tests
from endstate.grading._twins import MIN_TWINS, derived_from, pair_cases
from endstate.grading._twinsites import TestKey, _Source, _tests, mutation_sites
from endstate.sandbox import FileEntry, Tree
from endstate.task import is_test_module, parse_python

__all__ = ["validation_tree", "validation_command", "twin_problems", "joint_problems", "too_few"]

_MARK = "__twin_"


def _copies(path: str, data: bytes, derived: frozenset[str], wanted: set[TestKey] | None = None
            ) -> tuple[bytes, dict[str, TestKey]]:
    """The file with every candidate twin of the `wanted` tests (None: of every test) written as a renamed
    copy after its test."""
    sites = mutation_sites(path, data, derived)
    if wanted is not None:
        sites = {key: found for key, found in sites.items() if key in wanted}
    if not sites:
        return data, {}
    src = _Source(data)
    module = parse_python(data)
    inserts: list[tuple[int, bytes]] = []
    names: dict[str, TestKey] = {}
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    for cls, function in _tests(module):
        key = TestKey(stem, cls, function.name)
        if key not in sites:
            continue
        first = min([function.lineno] + [d.lineno for d in function.decorator_list])
        start, end = src.lines[first - 1], src.end(function)
        block = data[start:end]
        for k, site in enumerate(sites[key]):
            turned = block[:site.start - start] + site.text + block[site.end - start:]
            copy = f"{function.name}{_MARK}{k}"
            turned = turned.replace(f"def {function.name}(".encode(), f"def {copy}(".encode(), 1)
            inserts.append((end, b"\n\n" + turned))
            names[copy] = key
    for at, text in sorted(inserts, key=lambda i: i[0], reverse=True):
        data = data[:at] + text + data[at:]
    return data, names


def validation_tree(holdout: Tree, command: str | None = None) -> tuple[Tree, dict[str, TestKey]]:
    """The held-out tree with every candidate twin beside its test, and copy name -> test. Where the
    held-out `command` selects its tests by node id, only theirs: the others never run, and copies of
    every test of a large module (astropy's fits tests: 2416 of 87 tests) left pytest 3.3 rewriting a
    module of tens of thousands of lines, past a gigabyte and the command's time."""
    tree, names, derived = dict(holdout), {}, derived_from(holdout)
    wanted = _selected_tests(command) if command is not None else None
    for path, entry in holdout.items():
        if entry.link or not is_test_module(path):
            continue
        data, found = _copies(path, entry.data, derived, wanted)
        tree[path] = FileEntry(entry.mode, data)
        names.update(found)
    return tree, names


def _selected(runner: str, arg: str) -> tuple[TestKey, list[str]] | None:
    """The test `arg` selects by node id, and the id's parts; None if it selects no one test."""
    if runner == "pytest":
        parts = arg.split("::")
        module, cls = parts[0].rsplit("/", 1)[-1].removesuffix(".py"), parts[1] if len(parts) == 3 else ""
    else:
        parts = arg.split(".")
        module, cls = (parts[-3], parts[-2]) if len(parts) >= 3 else (parts[0], "")
    if len(parts) < 2:
        return None
    return TestKey(module, cls, parts[-1].partition("[")[0]), parts


def _selected_tests(command: str) -> set[TestKey] | None:
    """The tests the command selects, where each of its arguments names one by node id (else None)."""
    runner, args, _ = parse_test_command(command)
    chosen = [_selected(runner, arg) for arg in args if not arg.startswith("-")]
    if not chosen or any(c is None for c in chosen):
        return None
    return {c[0] for c in chosen if c is not None}


def _copy_ids(runner: str, arg: str, names: dict[str, TestKey]) -> list[str]:
    """The node ids that select the copies of the test `arg` selects by node id (none if it selects no one
    test), each of one parametrised case when `arg` names one."""
    selected = _selected(runner, arg)
    if selected is None:
        return []
    test, parts = selected
    _, bracket, case = parts[-1].partition("[")
    sep = "::" if runner == "pytest" else "."
    # One case of a parametrised test selects the same case of each copy: the bare name would run them all.
    return [sep.join(parts[:-1] + [copy + bracket + case]) for copy, key in sorted(names.items()) if key == test]


def validation_command(command: str, names: dict[str, TestKey]) -> str:
    """The held-out command with every copy `validation_tree` wrote selected beside its original's node id."""
    runner, args, env = parse_test_command(command)
    added = [copy for arg in args if not arg.startswith("-") for copy in _copy_ids(runner, arg, names)]
    if not added:
        return command
    invocation = ["python", "-m", runner] if runner in ("pytest", "unittest") else [runner]
    return shlex.join(env + invocation + args + added)


def twin_problems(grading: Grading, command: str, names: dict[str, TestKey]) -> tuple[int, list[str]]:
    """Run `command` (the held-out one) on a sealed solution staged with `validation_tree`:
    (how many tests a graded run can twin, what is wrong)."""
    # Every test runs beside all its candidates (more-itertools: 428 tests, 2919 candidates), so the run
    # gets the time of one held-out run per copy of a test, not one held-out run's.
    scale = 1 + len(names) / max(1, len(set(names.values())))
    run = run_tests(grading, command, timeout=grading.box.limits.command_timeout_s * scale)
    if run.timed_out:
        return 0, [f"`{command}` timed out with the candidate twins in place (after {scale:.1f} times the "
                   f"command timeout): {run.output_tail}"]
    if not run.report_found:
        return 0, [f"`{command}` wrote no report with the candidate twins in place: {run.output_tail}"]
    originals: dict[str, dict[str, CaseOutcome]] = {}
    copies: dict[str, dict[str, CaseOutcome]] = {}
    for _, name, outcome in run.cases:
        function, _, rest = name.partition("[")
        if _MARK in function:  # named as its original's case, for pair_cases
            copies.setdefault(function, {})[function.split(_MARK)[0] + (f"[{rest}" if rest else "")] = outcome
        else:
            originals.setdefault(function, {})[name] = outcome
    problems, twinned = [], set()
    for copy, cases in copies.items():
        real = originals.get(copy.split(_MARK)[0], {})
        pairs = pair_cases(real, cases)
        if pairs is None:
            problems.append(f"{copy.split(_MARK)[0]}: its candidate twin {copy} ran {len(cases)} case(s), "
                            f"its original {len(real)}")
            continue
        for real_outcome, outcome in pairs:
            if real_outcome != CaseOutcome.PASSED:
                continue
            twinned.add(names[copy])
            if outcome != CaseOutcome.FAILURE:
                problems.append(f"{copy.split(_MARK)[0]}: its candidate twin {copy} was {outcome} on solution/, not "
                                "failed (an assertion that can hold either way, or a test that is not deterministic)")
                break
    return len(twinned), problems


def joint_problems(grading: Grading, graders: list[Grader]) -> list[str]:
    """Where the visible tests share the first held-out half's process (see _joint.py): they still
    pass on the solution staged with `validation_tree`, run after the held-out tests and every
    candidate twin at once, more than any graded run leaves behind ([] when they pass, or share none)."""
    joint = joint_of(grading, graders)
    if joint is None:
        return []
    visible, _ = split_run(run_tests(grading, joint.command), joint)
    failing = sorted({name for _, name, outcome in visible.cases if outcome in FAILING})
    if not visible.report_found or failing or visible.errors:
        return [f"the visible tests fail when they run after the held-out tests and their twins in one process, "
                f"as a graded run's first half runs them (`{joint.command}`): {', '.join(failing[:5]) or 'no report'}; "
                "a held-out test leaves state behind that they read"]
    return []


def too_few(count: int) -> str:
    """What to tell the author of a task whose held-out run carries fewer than MIN_TWINS twins ("" if enough)."""
    if count >= MIN_TWINS:
        return ""
    return (f"the held-out tests yield {count} impossible twin(s) per run, {MIN_TWINS} are wanted: with so few, "
            "tampering that guesses which failing test is a twin gets a real chance; give more held-out tests "
            "(the command must select them) a top-level assertion that compares (==, <, in, assertEqual, ...) or "
            "checks a value, outside `with pytest.raises` blocks")
