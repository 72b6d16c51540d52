"""A run's seal of what the agent changed outside /workspace, for a task with `[seal] paths`."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from endstate.grading import Grading
from endstate.sandbox import (
    SNAPSHOT_MAX_BYTES,
    SystemChange,
    agent_processes,
    apply_change,
    combined_hash,
    read_change,
)

__all__ = ["give_system", "read_services", "read_system"]


def read_services(task: Any, live: Any, secrets: Collection[str] = ()) -> list:
    """The processes the agent left running, read before its container is stopped, for a task whose
    `[seal] processes` is on (else none), no variable holding one of the run's `secrets` in their
    environments. SandboxError when they cannot be read."""
    spec = task.manifest.seal
    return agent_processes(live, secrets) if spec.paths and spec.processes else []


def read_system(task: Any, stopped: Any, processes: list | None = None) -> SystemChange | None:
    """The stopped agent container's change under the task's sealed paths, with the `processes`
    read before it stopped (None for a task without)."""
    spec = task.manifest.seal
    if not spec.paths:
        return None
    return read_change(stopped, spec.paths, spec.ignore, max_bytes=SNAPSHOT_MAX_BYTES, processes=processes)


def give_system(change: SystemChange | None, grading: Any, state: Grading) -> str:
    """Give `change` to the fresh grading container (`grading`; None when grading runs in the agent's
    own) and fold its hash into the sealed tree hash; its processes go to the verifier, which starts
    them. Returns the lines the end-state diff gets for it ("" for a task without)."""
    if change is None:
        return ""
    if grading is not None:
        apply_change(grading, change)
        state.processes = list(change.processes)
    state.sealed.tree_hash = combined_hash(state.sealed.tree_hash, change)
    return f"\n# sealed outside /workspace: {len(change.files)} written, {len(change.deleted)} deleted" \
           f"{f', {len(change.processes)} process(es) running' if change.processes else ''}\n" + change.listing()
