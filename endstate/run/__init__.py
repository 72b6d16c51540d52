"""Running a suite: eval, record, replay, resume, retries, results and the executors (local and Ray)."""

from endstate.run._config import RunConfig, model_slug, task_pack_hash
from endstate.run._faults import INFRA_ERROR, RetryPolicy, wait_for_engine
from endstate.run._folder import RunFolder
from endstate.run._ray import suite_runner
from endstate.run._recordmode import RECORD_MODES
from endstate.run._regrade import grade_tree, regrade_run
from endstate.run._replay import prepare_fork, prepare_replay
from endstate.run._results import (
                                   RunCard,
                                   RunOutcome,
                                   RunResult,
                                   TaskResult,
                                   attempt_stem,
                                   make_folder,
                                   read_results,
                                   vector_of,
                                   write_atomically,
                                   write_results,
)
from endstate.run._resume import RUN_FILE, kept_on_resume
from endstate.run._runner import resolve_graders, run_suite

__all__ = [
    "INFRA_ERROR",
    "RECORD_MODES",
    "RUN_FILE",
    "RetryPolicy",
    "RunCard",
    "RunOutcome",
    "RunConfig",
    "RunFolder",
    "RunResult",
    "TaskResult",
    "attempt_stem",
    "grade_tree",
    "kept_on_resume",
    "make_folder",
    "model_slug",
    "prepare_fork",
    "prepare_replay",
    "read_results",
    "regrade_run",
    "resolve_graders",
    "run_suite",
    "suite_runner",
    "task_pack_hash",
    "vector_of",
    "wait_for_engine",
    "write_atomically",
    "write_results",
]
