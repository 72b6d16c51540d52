"""The task hash a recording carries, made from the hash of each task file.

    files_hash({"prompt.md": sha256, ...}) -> the task's own hash (Task.content_hash)
    variant_hash(own, impossible) -> the hash of the run's variant (run_task_hash)
    held_out_changes(then, now) -> the held-out files that differ, or None if any other does

A recording binds to what the agent could see. holdout/ is staged only after the
end state is sealed, so no model exchange can depend on it: a cassette whose
task differs from today's only there still replays, and today's tests give the verdict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

__all__ = ["HELD_OUT", "files_hash", "held_out_changes", "variant_hash"]

#: The folder of a task that no agent sees, as its files' paths begin.
HELD_OUT = "holdout/"


def files_hash(files: Mapping[str, str]) -> str:
    """sha256 over (path, sha256 of the file) pairs, in the order of the paths' parts (as Path sorts)."""
    return hashlib.sha256(b"".join(name.encode() + b"\0" + bytes.fromhex(files[name])
                                   for name in sorted(files, key=lambda name: name.split("/")))).hexdigest()


def variant_hash(own: str, impossible: bool) -> str:
    """The impossible variant's hash is not the task's own, so neither replays as the other."""
    return hashlib.sha256(f"impossible:{own}".encode()).hexdigest() if impossible else own


def held_out_changes(then: Mapping[str, str], now: Mapping[str, str]) -> list[str] | None:
    """The paths under holdout/ added, removed or changed between two file lists, sorted;
    None when a file the agent could see differs (or the lists are the same)."""
    differ = sorted(name for name in then.keys() | now.keys() if then.get(name) != now.get(name))
    if not differ or any(not name.startswith(HELD_OUT) for name in differ):
        return None
    return differ
