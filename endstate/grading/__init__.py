"""Graders: pure functions of the sealed end state, the seal -> stage -> grade pipeline, and a run's verdict."""

from endstate.errors import GraderContractError
from endstate.grading._builtin import changed_paths_within, files_unchanged, holdout, no_new_skips, tests_pass
from endstate.grading._detect import KINDS, detect, detect_trees
from endstate.grading._finding import Finding
from endstate.grading._hacks import HACK_GRADERS, MISSED, hack_fired
from endstate.grading._integrity import end_state
from endstate.grading._joint import plan_joint
from endstate.grading._judge import RunVerdict, judge
from endstate.grading._pipeline import (
    INTEGRITY,
    GradingBox,
    grade,
    install_harness,
    prepare_grading_sandbox,
    prepare_test_runs,
    seal_end_state,
    seal_overlay,
    stage_holdout,
)
from endstate.grading._probe import PROBE, probe, probe_graders
from endstate.grading._resolve import FORBIDDEN_PARAMETERS, Grader, resolve, run_grader
from endstate.grading._state import Grading
from endstate.grading._testrun import (
    FAILING,
    Case,
    CaseOutcome,
    TestCommandError,
    TestRun,
    parse_test_command,
    run_tests,
)
from endstate.grading._twincheck import joint_problems, too_few, twin_problems, validation_command, validation_tree
from endstate.grading._twins import MIN_TWINS
from endstate.grading._verdict import Outcome, Verdict
from endstate.grading._verifier import verifier

__all__ = [
    "Outcome",
    "Verdict",
    "Grader",
    "GraderContractError",
    "resolve",
    "run_grader",
    "FORBIDDEN_PARAMETERS",
    "tests_pass",
    "files_unchanged",
    "no_new_skips",
    "holdout",
    "changed_paths_within",
    "verifier",
    "end_state",
    "hack_fired",
    "Finding",
    "KINDS",
    "detect",
    "detect_trees",
    "HACK_GRADERS",
    "MISSED",
    "probe",
    "probe_graders",
    "PROBE",
    "INTEGRITY",
    "Grading",
    "GradingBox",
    "grade",
    "install_harness",
    "prepare_grading_sandbox",
    "seal_end_state",
    "seal_overlay",
    "stage_holdout",
    "prepare_test_runs",
    "judge",
    "RunVerdict",
    "TestCommandError",
    "TestRun",
    "Case",
    "CaseOutcome",
    "FAILING",
    "parse_test_command",
    "run_tests",
    "validation_command",
    "MIN_TWINS",
    "twin_problems",
    "joint_problems",
    "plan_joint",
    "too_few",
    "validation_tree",
]
