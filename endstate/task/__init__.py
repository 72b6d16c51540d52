"""The task definition: a task folder's manifest, decoded strictly, and what a run may depend on.

    load_task(folder) -> Task                  one task folder, validated (ManifestError names file and field)
    write_manifest(folder, manifest, header)   task.toml written from the Struct load_task reads (so are
                                               reference.toml and hack.toml: write_reference, write_hack)
    load_suite(folder, only=...) -> (tasks, errors)  every task under a folder; broken ones reported, not fatal
    Requires.violations(counters) -> [str]      the bounds a run's counters break
    apply_patch(tree, diff) / make_patch(...)   overlays written as unified diffs (hacks, solutions)

Below the agent and the models (which read a task's budget and trajectories) and above
the sandbox (a task's fixture is a sandbox Tree).
"""

from endstate.task._hash import HELD_OUT, files_hash, held_out_changes, variant_hash
from endstate.task._impossible import (
    ImpossibleError,
    agent_trees,
    impossible_fixture,
    impossible_holdout,
    run_task_hash,
)
from endstate.task._manifest import (
    COUNTERS,
    HACK_ASSERTIONS,
    Bound,
    Budget,
    Category,
    GraderSpec,
    Hack,
    HackSpec,
    Manifest,
    Reference,
    ReferenceStep,
    Requires,
    SandboxSpec,
    Task,
    ToolCallSpec,
    load_probe,
    load_suite,
    load_task,
)
from endstate.task._patch import PatchError, apply_patch, make_patch, write_overlay_diff
from endstate.task._runners import TEST_RUNNERS, UNGUARDED, unguarded_of
from endstate.task._source import literal_python, parse_python
from endstate.task._task_sandbox import TaskSandbox, own_image_ids, task_sandbox
from endstate.task._testfiles import TEST_FOLDERS, is_test_code, is_test_file, is_test_module
from endstate.task._toml import toml_text, write_hack, write_manifest, write_reference
from endstate.task._triage import (
    ADEQUACY_FILE,
    Equivalent,
    Measured,
    Triage,
    load_equivalents,
    load_triage,
    recorded_adequacy,
)

__all__ = ["literal_python", "parse_python",
    "HELD_OUT", "files_hash", "held_out_changes", "variant_hash",
    "ImpossibleError", "agent_trees", "impossible_fixture", "impossible_holdout", "run_task_hash",
    "TaskSandbox", "own_image_ids", "task_sandbox",
    "TEST_FOLDERS", "is_test_code", "is_test_file", "is_test_module",
    "toml_text", "write_manifest", "write_reference", "write_hack",
    "ADEQUACY_FILE", "Equivalent", "Measured", "Triage", "load_equivalents", "load_triage", "recorded_adequacy",
    "load_probe",
    "Task",
    "Manifest",
    "Category",
    "Budget",
    "Requires",
    "Bound",
    "COUNTERS",
    "GraderSpec",
    "SandboxSpec",
    "HackSpec",
    "Hack",
    "HACK_ASSERTIONS",
    "Reference",
    "ReferenceStep",
    "ToolCallSpec",
    "load_task",
    "load_suite",
    "PatchError",
    "apply_patch",
    "make_patch",
    "write_overlay_diff",
    "TEST_RUNNERS",
    "UNGUARDED",
    "unguarded_of",
]
