"""A dataset's patch laid over its base tree as SWE-bench's harness lays it.

SWE-bench's harness tries `git apply --verbose`, then `git apply --verbose --reject`, then
`patch --batch --fuzz=5 -p1 -i`, and takes the first that succeeds: a hunk may land some lines
away from the line its header names (sympy's and sphinx's test patches, made against a later
tree), and under `patch` with context that differs by up to five lines. A task's own diffs are
applied strictly (`endstate.task.apply_patch`: a hack that applied in part must never be graded
as caught); a dataset's patch is taken as its harness takes it, and written back strictly.

The strict applier is tried first (in memory); the fallbacks run in a temporary folder holding
only the files the patch names, so a large tree costs nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from endstate.errors import UserError
from endstate.sandbox import FileEntry, Tree
from endstate.task import PatchError, apply_patch, make_patch

__all__ = ["Applied", "apply_as_swebench", "apply_field", "strict_diff", "HARNESS_APPLIERS"]

#: SWE-bench's harness's appliers, in its order (swebench/harness/run_evaluation.py, GIT_APPLY_CMDS).
HARNESS_APPLIERS = (
    ("git apply", ["git", "apply", "--verbose"]),
    ("git apply --reject", ["git", "apply", "--verbose", "--reject"]),
    ("patch --fuzz=5", ["patch", "--batch", "--fuzz=5", "-p1", "-i"]),
)


class Applied(NamedTuple):
    """A patch applied: the tree after it, the paths it deleted, and which applier took it
    ("" when it applied strictly, exactly at the lines it names)."""

    tree: Tree
    deleted: list[str]
    by: str


def apply_as_swebench(tree: Tree, patch: bytes) -> Applied:
    """`tree` with `patch` applied, strictly if it can be, else by the first of the harness's
    appliers that takes it whole. PatchError (the strict applier's reason, naming the hunk) when
    none does."""
    try:
        return Applied(*apply_patch(tree, patch), by="")
    except PatchError as exc:
        strict = exc
    paths = _named_paths(patch)
    for name, command in HARNESS_APPLIERS:
        if shutil.which(command[0]) is None:
            continue
        applied = _run(tree, patch, paths, command)
        if applied is not None:
            return Applied(*applied, by=name)
    raise PatchError(f"{strict} (nor does it apply as SWE-bench's harness applies it: "
                     + ", ".join(name for name, _ in HARNESS_APPLIERS) + ")") from None


def apply_field(field: str, patch: str, fixture: Tree, log: Callable[[str], None] = lambda line: None) -> Applied:
    """An instance's `patch` or `test_patch` (`field`) laid over its base tree as the harness lays
    it; UserError naming the field when it does not apply. A fallback's taking it is said in the log."""
    try:
        applied = apply_as_swebench(fixture, patch.encode("utf-8"))
    except PatchError as exc:
        raise UserError(f"field `{field}` does not apply at base_commit: {exc}") from None
    if applied.by:
        log(f"field `{field}` applies at base_commit only as `{applied.by}` takes it (hunks away from the "
            "lines they name), as SWE-bench's harness applies it")
    return applied


def strict_diff(given: bytes, before: Tree, after: Tree) -> bytes:
    """A task's diff from `before` to `after`: `given` where it applies strictly (as a task's diffs
    must), else the change as a fallback made it (`make_patch`)."""
    try:
        apply_patch(before, given)
        return given
    except PatchError:
        return make_patch(before, after)


def _run(tree: Tree, patch: bytes, paths: list[str], command: list[str]) -> tuple[Tree, list[str]] | None:
    with tempfile.TemporaryDirectory(prefix="endstate-apply-") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        for path in paths:
            entry = tree.get(path)
            if entry is not None and not entry.link:
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(entry.data)
                target.chmod(entry.mode)
        diff = Path(tmp) / "patch.diff"
        diff.write_bytes(patch)
        # No repository above the folder: git applies to the files here, as in the harness's checkout.
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": tmp, "LC_ALL": "C"}
        done = subprocess.run([*command, str(diff)], cwd=root, env=env, capture_output=True, check=False)
        if done.returncode != 0:
            return None
        result, deleted = dict(tree), []
        for path in paths:
            target = root / path
            if target.is_file() and not target.is_symlink():
                result[path] = FileEntry(0o755 if target.stat().st_mode & 0o111 else 0o644, target.read_bytes())
            elif path in result:
                result.pop(path)
                deleted.append(path)
        return result, sorted(deleted)


_HEADER = re.compile(rb"^(?:diff --git a/(.+) b/(.+)|(?:rename|copy) (?:from|to) (.+)|(?:---|\+\+\+) (\S.*))$",
                     re.MULTILINE)


def _named_paths(patch: bytes) -> list[str]:
    """Every path the patch's headers name (`diff --git`, renames and copies, `---`/`+++` less its
    first component), relative and inside the tree; read leniently, as the appliers read them."""
    found: list[str] = []
    for match in _HEADER.finditer(patch):
        for raw in match.groups():
            if raw is None:
                continue
            text = raw.rstrip(b"\r").split(b"\t", 1)[0].decode("utf-8", errors="surrogateescape").strip('"')
            if match[4] is not None:  # ---/+++: /dev/null, or a path with its a/ or b/ (-p1)
                if text == "/dev/null" or "/" not in text:
                    continue
                text = text.split("/", 1)[1]
            found.append(text)
    return [p for p in dict.fromkeys(found)
            if p and not p.startswith("/") and ".." not in Path(p).parts]
