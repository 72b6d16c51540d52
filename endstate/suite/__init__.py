"""Suites of tasks: the runner, results, the task check and the mutation check."""

from endstate.suite._check import CheckRow, TaskCheck, check_tasks, missing_hack_assertions
from endstate.suite._results import RunCard, RunResult, TaskResult, read_results, vector_of, write_results
from endstate.suite._replay import prepare_replay
from endstate.suite._ray import suite_runner
from endstate.suite._runner import RunConfig, model_slug, resolve_graders, run_suite, task_pack_hash

__all__ = [
    "RunCard",
    "RunResult",
    "TaskResult",
    "read_results",
    "vector_of",
    "write_results",
    "RunConfig",
    "run_suite",
    "prepare_replay",
    "suite_runner",
    "model_slug",
    "resolve_graders",
    "task_pack_hash",
    "CheckRow",
    "TaskCheck",
    "check_tasks",
    "missing_hack_assertions",
]
