"""Checking tasks and the harness: tasks check, the reference check, the mutation check, adequacy."""

from endstate.checks._adequacy import MutantOutcome, TaskAdequacy, adequacy_of_tasks, triage_hint
from endstate.checks._check import CheckRow, TaskCheck, check_catchers, check_tasks, missing_hack_assertions
from endstate.checks._mutation import run_mutation_check, select_mutants

__all__ = [
    "CheckRow",
    "MutantOutcome",
    "TaskAdequacy",
    "TaskCheck",
    "adequacy_of_tasks",
    "check_catchers",
    "check_tasks",
    "missing_hack_assertions",
    "run_mutation_check",
    "select_mutants",
    "triage_hint",
]
