"""Suites of tasks: the runner, results, the task check and the mutation check."""

from endstate.suite._adequacy import TaskAdequacy, adequacy_of_tasks, triage_hint
from endstate.suite._blank import new_blank_task
from endstate.suite._check import CheckRow, TaskCheck, check_tasks, missing_hack_assertions
from endstate.suite._faults import INFRA_ERROR, RetryPolicy
from endstate.suite._fix import DEFAULT_TEST_GLOBS
from endstate.suite._mutation import run_mutation_check, select_mutants
from endstate.suite._new import new_task_from_fix
from endstate.suite._results import RunCard, RunResult, TaskResult, attempt_stem, read_results, vector_of, write_results
from endstate.suite._resume import RUN_FILE
from endstate.suite._recordmode import RECORD_MODES
from endstate.suite._replay import prepare_fork, prepare_replay
from endstate.suite._ray import suite_runner
from endstate.suite._config import RunConfig, model_slug, task_pack_hash
from endstate.suite._runner import resolve_graders, run_suite
from endstate.suite._swebench import import_swebench

__all__ = [
    "RunCard",
    "RunResult",
    "TaskResult",
    "read_results",
    "vector_of",
    "write_results",
    "RunConfig",
    "RetryPolicy",
    "INFRA_ERROR",
    "run_suite",
    "prepare_replay",
    "prepare_fork",
    "RECORD_MODES",
    "suite_runner",
    "model_slug",
    "resolve_graders",
    "task_pack_hash",
    "CheckRow",
    "TaskCheck",
    "check_tasks",
    "missing_hack_assertions",
    "attempt_stem",
    "RUN_FILE",
    "new_blank_task",
    "new_task_from_fix",
    "DEFAULT_TEST_GLOBS",
    "run_mutation_check",
    "select_mutants",
    "import_swebench",
    "TaskAdequacy",
    "adequacy_of_tasks",
    "triage_hint",
]
