"""What grading keeps while it grades one sealed end state.

The sealed sandbox is what a grader sees (`endstate.sandbox.SealedSandbox`); everything the
pipeline decides and remembers on the way (the trees each grading sandbox write gives, the
canaries, the twin plan, the joint run, the warm runner, the scratch copies) lives here, in a
`Grading` made when the end state is sealed and passed to staging, the test runs and the twins.

A built-in grader that runs tests is handed the sealed sandbox like any other; it finds the
grading state made for that sandbox with `Grading.of`.
"""

from __future__ import annotations

import weakref

from endstate.grading._verdict import Verdict
from endstate.guards import Guards
from endstate.sandbox import Process, Sandbox, SealedSandbox, Tree

__all__ = ["Grading"]

#: The grading state of each sealed sandbox still in use.
_BY_SEALED: weakref.WeakKeyDictionary[SealedSandbox, Grading] = weakref.WeakKeyDictionary()


class Grading:
    """The state of grading one sealed end state in one grading sandbox (`box`; None when there
    is none to run commands in), under the run's `guards`."""

    def __init__(self, sealed: SealedSandbox, box: Sandbox | None, guards: Guards = Guards(), *,
                 graded: Tree | None = None, ignored_caches: list[str] | None = None) -> None:
        self.sealed = sealed
        self._box = box
        #: Cache files the end state held and the graders never saw.
        self.ignored_caches = list(ignored_caches or [])
        #: The guards the end state was sealed under (the mutation check turns them off one at a time).
        self.guards = guards
        #: What the grading sandbox received of the end state (the snapshot, unless a mutant says otherwise).
        self.graded: Tree = sealed.tree() if graded is None else graded
        #: The same with the canaries and no held-out file: what a visible-only test run is given.
        self.visible: Tree = {}
        #: Paths the harness staged into the grading sandbox after sealing (held-out tests).
        self.staged: set[str] = set()
        #: Whether the grading sandbox has received what it grades (see `stage_holdout`).
        self.stage_done = False
        #: The harness's canary tests staged beside the tests: (test name, words marking its output).
        self.canaries: list[tuple[str, tuple[str, ...]]] = []
        #: The probe graders' verdicts, when they ran at staging before anything held out was there.
        self.probe_verdicts: list[Verdict] = []
        #: The processes the agent left running, sealed, for the verifier to start again (a Harbor task's).
        self.processes: list[Process] = []
        # The next three are typed `object`: their types (_twins.TwinPlan, _joint.Joint, _testrun.TestRun)
        # live in modules that take a Grading, and naming them here would close an import circle.
        #: The twin plan drawn at staging (a TwinPlan), None when twins are off.
        self.twin_plan: object = None
        #: The joint run of the visible and held-out tests (a Joint), when there is one; and the
        #: halves it has run, (half, TestRun).
        self.joint: object = None
        self.joint_done: list[tuple[int, object]] = []
        #: Whether the test runner is prepared, and whether a warm runner was started for it.
        self.test_runs_ready = False
        self.warm_runner = False
        #: Scratch copies of the graded tree made for a test run, which a later restage must reach.
        self.scratch_copies: list[str] = []
        _BY_SEALED[sealed] = self

    @property
    def box(self) -> Sandbox:
        """The grading sandbox."""
        if self._box is None:
            raise RuntimeError("this sealed end state has no grading sandbox to run commands in")
        return self._box

    @property
    def has_box(self) -> bool:
        return self._box is not None

    @classmethod
    def of(cls, sealed: SealedSandbox) -> Grading:
        """The grading state made for `sealed`; a fresh one (no grading sandbox) for an end state
        sealed for file questions only."""
        found = _BY_SEALED.get(sealed)
        return found if found is not None else cls(sealed, None)
