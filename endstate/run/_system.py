"""A run's seal of what the agent changed outside /workspace, for a task with `[seal] paths`."""

from __future__ import annotations

from typing import Any

from endstate.sandbox import SNAPSHOT_MAX_BYTES, SealedSandbox, apply_change, combined_hash, read_change

__all__ = ["seal_system"]


def seal_system(task: Any, stopped: Any, grading: Any, sealed: SealedSandbox) -> str:
    """Read the stopped agent container's change under the task's sealed paths, give it to the fresh
    grading container (`grading`; None when grading runs in the agent's own), and fold its hash into
    the sealed tree hash. Returns the lines the end-state diff gets for it ("" for a task without)."""
    spec = task.manifest.seal
    if not spec.paths:
        return ""
    change = read_change(stopped, spec.paths, spec.ignore, max_bytes=SNAPSHOT_MAX_BYTES)
    if grading is not None:
        apply_change(grading, change)
    sealed.tree_hash = combined_hash(sealed.tree_hash, change)
    return f"\n# sealed outside /workspace ({', '.join(spec.paths)}): {len(change.files)} written, " \
           f"{len(change.deleted)} deleted\n" + change.listing()
