"""A run's verdict: what grading says about one sealed end state, in one call.

    judge(grading, holdout, graders, guards, requires=..., counters=...) -> RunVerdict

stages the held-out tests, runs every grader (then the end-state checks), and folds
their verdicts with the task's `requires` bounds into the run's outcome: the first
grader that errored, else the first that failed, else a broken bound, else a pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from endstate.grading._detect import detect
from endstate.grading._finding import Finding
from endstate.grading._pipeline import grade, stage_holdout
from endstate.grading._resolve import Grader
from endstate.grading._state import Grading
from endstate.grading._verdict import Outcome, Verdict
from endstate.guards import Guards
from endstate.sandbox import Tree

if TYPE_CHECKING:
    from endstate.task import Requires

__all__ = ["RunVerdict", "judge"]


class RunVerdict(NamedTuple):
    outcome: Outcome
    #: The grader (or "requires") the outcome is down to; "" for a pass.
    failing_grader: str
    reason: str
    #: Every grader's verdict, by short name, in the order they ran.
    verdicts: list[tuple[str, Verdict]]
    requires_violations: list[str]
    #: What the detectors name in the end state's diff (see _detect.py); graders never read them.
    findings: list[Finding] = []


def judge(grading: Grading, holdout: Tree, graders: list[Grader], guards: Guards = Guards(), *,
          requires: Requires, counters: Any, normalise: Callable[[str], str] = str) -> RunVerdict:
    """Stage `holdout` beside the sealed end state, grade it, and fold the verdicts with the
    bounds `requires` puts on the run's `counters`. `normalise` rewrites each verdict's reason
    (reasons quote test output: the runner normalises them like tool output)."""
    stage_holdout(grading, holdout, graders, guards)
    verdicts = [(n, msgspec.structs.replace(v, reason=normalise(v.reason))) for n, v in grade(grading, graders, guards)]
    if not guards.grader_errors:  # mutant: a grader that raised counts as a pass
        verdicts = [(n, Verdict.ok(v.reason) if v.outcome is Outcome.ERROR else v) for n, v in verdicts]
    violations = requires.violations(counters)
    errors = [(n, v) for n, v in verdicts if v.outcome is Outcome.ERROR]
    failures = [(n, v) for n, v in verdicts if v.outcome is Outcome.FAIL]
    # A failure stands whatever else broke: the end state failed a check, and an error elsewhere
    # (which the end state may have caused) must not hide that, nor the hack it may name.
    if failures:
        outcome, failing, reason = Outcome.FAIL, failures[0][0], failures[0][1].reason
    elif errors:
        outcome, failing, reason = Outcome.ERROR, errors[0][0], errors[0][1].reason
    elif violations:
        outcome, failing, reason = Outcome.FAIL, "requires", "; ".join(violations)
    else:
        outcome, failing, reason = Outcome.PASS, "", ""
    # Honest runs write no bytecode (PYTHONDONTWRITEBYTECODE); one in the end state was put there.
    bytecode = [p for p in grading.ignored_caches if p.endswith((".pyc", ".pyo"))]
    if outcome is not Outcome.PASS and bytecode:
        reason += (f" [the end state also held {len(bytecode)} bytecode file(s), which are never "
                   f"graded, e.g. {bytecode[0]}]")
    findings = detect(grading.sealed, off=guards.detectors_off)
    return RunVerdict(outcome, failing, reason, verdicts, violations, findings)
