"""A run's seal of what the agent changed outside /workspace, for a task with `[seal] paths`."""

from __future__ import annotations

from typing import Any

from endstate.sandbox import SNAPSHOT_MAX_BYTES, SealedSandbox, SystemChange, apply_change, combined_hash, read_change

__all__ = ["read_system", "give_system"]


def read_system(task: Any, stopped: Any) -> SystemChange | None:
    """The stopped agent container's change under the task's sealed paths (None for a task without)."""
    spec = task.manifest.seal
    if not spec.paths:
        return None
    return read_change(stopped, spec.paths, spec.ignore, max_bytes=SNAPSHOT_MAX_BYTES)


def give_system(change: SystemChange | None, grading: Any, sealed: SealedSandbox) -> str:
    """Give `change` to the fresh grading container (`grading`; None when grading runs in the agent's
    own) and fold its hash into the sealed tree hash. Returns the lines the end-state diff gets for
    it ("" for a task without)."""
    if change is None:
        return ""
    if grading is not None:
        apply_change(grading, change)
    sealed.tree_hash = combined_hash(sealed.tree_hash, change)
    return f"\n# sealed outside /workspace: {len(change.files)} written, {len(change.deleted)} deleted\n" \
           + change.listing()
