"""Impossible twins: held-out tests turned so that they must fail, graded beside the real ones.

Code that runs inside a test process can rewrite whatever the process reports: the
report, the guard's file, the canary's line. What it cannot do is tell a failing real
test it has never seen from a failing twin of one. So every graded run of held-out
tests carries twins, and a twin that does not fail while the real tests pass means the
outcomes were rewritten, whatever the process wrote about itself.

A twin is one held-out test with one top-level assertion turned into a statement that
cannot hold together with it: a comparison's operator replaced by its complement
(`==` -> `!=`, `<` -> `>=`, `in` -> `not in`, `is` -> `is not`), the expected constant of
an `==` changed, `assert x` <-> `assert not x`, a unittest assertion swapped for its
opposite (`assertEqual` -> `assertNotEqual`, ...). On deterministic code a twin can pass
only where its original fails; `tasks check` runs every candidate on `solution/` and the
task's own runs prove each chosen twin fails there.

A twin never meets its original. The held-out run is split in two halves (two test
processes, one after the other, in the same grading sandbox): every twinned test is the
real test in one half and its twin, in the same file under the same name, in the other,
so each half sees every test exactly once and no pair to compare. Before each half,
whatever earlier test processes started has been killed, every copy of the held-out
files is overwritten as root with that half's (a visible-test run of its own, before,
saw the real files; see _joint.py for the visible tests riding in the first half), and
the half's command first empties every place the test user can write
(temp folders, its home, the report and scratch folders, System V IPC, POSIX message
queues), so nothing of an earlier process reaches it. What a process read leaves no
trace either: the harness gives everything it writes an access time in the future,
which reading does not change (sandbox/_scripts.py, `_UNTAR_AS_ROOT`).

Which assertion of a test is turned, and in which half a test is real, come from
HMAC-SHA256(a secret drawn per staging that never enters a sandbox, the sealed tree's
hash): fresh each run, unknowable to the end state. Outcomes do not depend on them: each
real test runs exactly once whatever the draw, and an honest end state fails every twin
whose original passes.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Callable
from typing import NamedTuple

from endstate.grading._state import Grading
from endstate.grading._testrun import (
    FAILING,
    PLAIN_FLAGS,
    WIPE,
    Case,
    CaseOutcome,
    TestCommandError,
    TestRun,
    command_words,
    parse_test_command,
)
from endstate.grading._twinsites import Site, TestKey, apply_sites, base_classes, mutation_sites
from endstate.sandbox import WORKDIR, FileEntry, Tree
from endstate.task import is_test_module

__all__ = ["TestKey", "Site", "TwinPlan", "mutation_sites", "derived_from", "plan_twins", "twin_seed", "case_key", "WIPE",
           "MIN_TWINS", "Tally", "tally", "pair_cases", "run_halves"]

#: A task must yield at least this many twins per graded run (`tasks check` says so otherwise).
MIN_TWINS = 3


def twin_seed(secret: bytes, tree_hash: str) -> bytes:
    return hmac.new(secret, tree_hash.encode(), hashlib.sha256).digest()


def case_key(classname: str, name: str) -> tuple[TestKey, TestKey]:
    """The two keys a report's test case may belong to: (module, class, function) or (module, "", function)."""
    function = name.split("[", 1)[0]
    parts = classname.split(".")
    in_class = TestKey(parts[-2] if len(parts) > 1 else "", parts[-1], function)
    return in_class, TestKey(parts[-1], "", function)


class TwinPlan:
    """Which held-out tests have a twin this run, in which half each is real, and the two
    halves' versions of the held-out test files."""

    def __init__(self, halves: tuple[Tree, Tree], side: dict[TestKey, int], first: int,
                 files: dict[TestKey, str] | None = None):
        #: Per half: the held-out test files as that half sees them.
        self.halves = halves
        #: Per twinned test: its held-out file.
        self.files = files or {}
        #: Per twinned test: the half where it is the real test (its twin runs in the other).
        self.side = side
        #: The half that runs first.
        self.first = first

    def collected_by(self, command: str) -> frozenset[TestKey]:
        """The twinned tests `command` must run: where it is a pytest run of whole files and folders
        (plain flags, no node id, no option that selects), those of its files, in a class pytest
        collects by its default name (or none); else none, as nothing can be told."""
        try:
            runner, args, _ = parse_test_command(command)
        except TestCommandError:
            return frozenset()
        paths = [arg.removeprefix("./").rstrip("/") or "." for arg in args if not arg.startswith("-")]
        if runner != "pytest" or not paths or any("::" in p for p in paths) or \
                any(not PLAIN_FLAGS.fullmatch(arg) for arg in args if arg.startswith("-")):
            return frozenset()
        return frozenset(key for key, path in self.files.items() if (not key.cls or key.cls.startswith("Test"))
                         and any(p == "." or path == p or path.startswith(p + "/") for p in paths))

    def key_of(self, classname: str, name: str) -> TestKey | None:
        for key in case_key(classname, name):
            if key in self.side:
                return key
        return None


def plan_twins(holdout: Tree, seed: bytes, values: bool = True, named: frozenset[str] = frozenset()
               ) -> TwinPlan | None:
    """Turn one assertion of every held-out test that has one; None when none has.

    A test that can be turned by changing a value it expects always is (`values`; off, the
    mutation check's weaker twins turn operators wherever they can). A test a command names by
    its cases' ids (`named`: "path::function" or "path::Class::function") keeps its `parametrize`
    rows, whose values the ids are made of: its twin turns its body, or it has none."""
    rng = random.Random(seed)
    chosen: dict[str, dict[TestKey, Site]] = {}
    stems: dict[str, int] = {}
    for path in holdout:
        if is_test_module(path):
            stems[path.rsplit("/", 1)[-1]] = stems.get(path.rsplit("/", 1)[-1], 0) + 1
    derived = derived_from(holdout)
    for path in sorted(holdout):
        entry = holdout[path]
        if entry.link or not is_test_module(path) or stems[path.rsplit("/", 1)[-1]] > 1:
            continue  # two files of one name would make their tests' keys ambiguous
        sites = {key: kept for key, options in mutation_sites(path, entry.data, derived).items()
                 if (kept := [s for s in options if not (s.renames and _named(path, key) in named)])}
        if sites:
            chosen[path] = {key: rng.choice([s for s in options if s.value is values] or options)
                            for key, options in sites.items()}
    keys = [key for path in sorted(chosen) for key in chosen[path]]
    if not keys:
        return None
    rng.shuffle(keys)
    first = rng.randrange(2)
    side = {key: (first + i) % 2 for i, key in enumerate(keys)}
    files = {key: path for path, sites in chosen.items() for key in sites}
    halves: tuple[Tree, Tree] = ({}, {})
    for half in (0, 1):
        for path, sites in chosen.items():
            turned = [site for key, site in sites.items() if side[key] != half]
            halves[half][path] = FileEntry(holdout[path].mode, apply_sites(holdout[path].data, turned))
    return TwinPlan(halves, side, rng.randrange(2), files)


def derived_from(holdout: Tree) -> frozenset[str]:
    """Every class name a held-out test module derives a class from: no twin for their methods."""
    return frozenset(name for path, entry in holdout.items() if not entry.link and is_test_module(path)
                     for name in base_classes(entry.data))


def _named(path: str, key: TestKey) -> str:
    return f"{path}::{key.cls}::{key.name}" if key.cls else f"{path}::{key.name}"


def named_by_case(commands: list[str]) -> frozenset[str]:
    """The tests ("path::function", "path::Class::function") whose cases `commands` name by their
    parametrised ids (`tests/t.py::test_x[a-b]`)."""
    named: set[str] = set()
    for command in commands:
        try:
            words, _ = command_words(command, "a test command")
        except TestCommandError:  # not a command the harness runs: its test run says so
            continue
        named.update(word.split("[", 1)[0] for word in words if "::" in word and "[" in word)
    return frozenset(named)


class Tally(NamedTuple):
    """What the halves of a held-out run say, the real tests counted once each."""

    tests: int
    failures: int
    errors: int
    skipped: int
    #: Names of the real tests that failed or errored.
    failing: list[str]
    #: Twinned tests reported in both halves.
    twins: int
    #: Twins that did not fail while their real test passed, or that only one half reported.
    betrayed: list[str]
    #: Names of the real tests reported skipped.
    skipping: list[str] = []
    #: Twinned tests the command must run (`TwinPlan.collected_by`) that neither half reported.
    missing: list[str] = []


def pair_cases(originals: dict[str, CaseOutcome],
               turned: dict[str, CaseOutcome]) -> list[tuple[CaseOutcome, CaseOutcome]] | None:
    """(real outcome, twin outcome) per case of one twinned test, None if the halves disagree on
    its cases. A twin that changed a parameter renames the cases pytest names after their values:
    those are paired in the order they ran, which both halves share."""
    if set(originals) == set(turned):
        return [(outcome, turned[name]) for name, outcome in originals.items()]
    if len(originals) == len(turned) and all("[" in name for name in [*originals, *turned]):
        return list(zip(originals.values(), turned.values()))
    return None


def tally(plan: TwinPlan, runs: list[tuple[int, list[Case]]], expected: frozenset[TestKey] = frozenset()) -> Tally:
    """Count the real tests of `runs` ((half, cases) in the order they ran, both halves) and check
    every twin; `expected`: twinned tests that must be reported (a test kept from running in both
    halves, its twin with it, is missing from both: no twin tells, only this)."""
    real: list[tuple[str, CaseOutcome]] = []
    by_key: dict[TestKey, tuple[dict[str, CaseOutcome], dict[str, CaseOutcome]]] = {}
    for order, (half, cases) in enumerate(runs):
        for classname, name, outcome in cases:
            key = plan.key_of(classname, name)
            if key is None:
                if order == 0:  # a test without a twin runs in both halves: counted once
                    real.append((name, outcome))
                continue
            twin = plan.side[key] != half
            by_key.setdefault(key, ({}, {}))[twin][name] = outcome
            if not twin:
                real.append((name, outcome))
    betrayed, twins = [], 0
    for key, (originals, turned) in sorted(by_key.items()):
        label = f"{key.cls + '.' if key.cls else ''}{key.name}"
        pairs = pair_cases(originals, turned)
        if pairs is None:
            betrayed.append(f"{label} (reported in one half only)")
            continue
        twins += 1
        lies = sorted({twin for real, twin in pairs if real == CaseOutcome.PASSED and twin != CaseOutcome.FAILURE})
        if lies:
            betrayed.append(f"{label} ({', '.join(lies)})")
    outcomes = [outcome for _, outcome in real]
    failing = sorted({name for name, outcome in real if outcome in FAILING})
    skipping = sorted({name for name, outcome in real if outcome == CaseOutcome.SKIPPED})
    missing = sorted(f"{key.cls + '.' if key.cls else ''}{key.name}" for key in expected if key not in by_key)
    return Tally(len(real), outcomes.count(CaseOutcome.FAILURE), outcomes.count(CaseOutcome.ERROR), outcomes.count(CaseOutcome.SKIPPED),
                 failing, twins, betrayed, skipping, missing)


def run_halves(grading: Grading, plan: TwinPlan, run: Callable[[str, dict], TestRun], trusted: Callable[[TestRun], bool], *,
               done: list[tuple[int, TestRun]] | None = None, limit: int = 2) -> list[tuple[int, TestRun]]:
    """Run the held-out command once per half (the second only if the first can be trusted);
    `done`: the halves that already ran (see _joint.py), `limit`: how many halves in all.

    Before each, every copy of the held-out files a test process could read (the workspace,
    each earlier run's scratch copy) is overwritten as root with that half's, in the same
    write as the run's own scratch copy, and its command first wipes what the test user
    left anywhere. Afterwards the graded tree holds the real held-out files again, for any
    grader that runs later (the workspace itself keeps the last half's)."""
    real = grading.graded
    order = (plan.first, 1 - plan.first)
    runs: list[tuple[int, TestRun]] = list(done or [])
    if runs and not trusted(runs[-1][1]):
        return runs
    try:
        for half in order[len(runs):limit]:
            files = plan.halves[half]
            # Each copy keeps its owner: the workspace root's; a scratch copy's folders stay sticky,
            # so what the test user left in them is the wipe's to delete.
            restage = {WORKDIR: (files, "root"),
                       **{at: (files, "scratch") for at in grading.scratch_copies}}
            if real:
                grading.graded = {**real, **files}
            runs.append((half, run(WIPE if grading.guards.half_isolation else "", restage)))
            if not trusted(runs[-1][1]):
                break
    finally:
        if real:
            grading.graded = real
    return runs
