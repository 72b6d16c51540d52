"""The sealed end state: what graders see.

`seal()` is called the moment the agent stops, with the agent's sandbox already
stopped (no process of the agent survives to change anything afterwards). It reads
the whole workspace once — regular files, and symlinks as symlinks — hashes it and
keeps the snapshot. Every later question about the end state is answered from that
snapshot, and graders that run commands run them in a *grading* sandbox: a fresh
one from the pristine image holding exactly the snapshot (plus, later, the held-out
tests), read-only to the user the tests run as. What is graded is what was hashed.

Interpreter and test-runner caches (`__pycache__/`, `*.pyc`, `.pytest_cache/`) are
neither hashed nor carried into the grading sandbox: running the tests is not a
change, and a planted bytecode file can therefore never stand in for its source.
"""

from __future__ import annotations

import difflib
import fnmatch
import posixpath

from endstate.sandbox._base import WORKDIR, ExecResult, Sandbox
from endstate.sandbox._tree import Tree, tree_hash

__all__ = ["SealedSandbox", "seal", "matches_any", "without_caches", "cache_paths", "resolve_link", "CACHE_DIRS",
           "SNAPSHOT_MAX_BYTES"]

#: The most bytes of files an end state may hold; past it sealing stops reading.
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024


def matches_any(path: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """Glob match where `dir/**` covers everything below `dir`."""
    for pattern in patterns:
        if fnmatch.fnmatchcase(path, pattern):
            return True
        if pattern.endswith("/**") and (path + "/").startswith(pattern[:-2]):
            return True
    return False


#: Caches that running Python or pytest leaves behind: not part of anyone's end state.
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache"})
CACHE_SUFFIXES = (".pyc", ".pyo")


def _is_cache(path: str) -> bool:
    return path.endswith(CACHE_SUFFIXES) or bool(CACHE_DIRS.intersection(path.split("/")[:-1]))


def without_caches(tree: Tree) -> Tree:
    return {path: entry for path, entry in tree.items() if not _is_cache(path)}


def cache_paths(tree: Tree) -> list[str]:
    return sorted(path for path in tree if _is_cache(path))


def resolve_link(tree: Tree, path: str) -> str | None:
    """Where `path` leads inside the workspace, following the tree's links; None
    when any step leads out of the workspace (or loops)."""
    parts = path.split("/")
    current = WORKDIR
    hops = 0
    while parts:
        part = parts.pop(0)
        candidate = posixpath.normpath(posixpath.join(current, part))
        if candidate != WORKDIR and not candidate.startswith(WORKDIR + "/"):
            return None
        rel = candidate[len(WORKDIR) + 1:]
        entry = tree.get(rel)
        if entry is not None and entry.link:
            hops += 1
            if hops > 40:
                return None
            target = entry.link
            base = WORKDIR if target.startswith("/") else posixpath.dirname(candidate)
            if target.startswith("/"):
                resolved = posixpath.normpath(target)
            else:
                resolved = posixpath.normpath(posixpath.join(base, target))
            if resolved != WORKDIR and not resolved.startswith(WORKDIR + "/"):
                return None
            # Walk the target's own components again: they may be links too.
            parts = resolved[len(WORKDIR):].strip("/").split("/") + parts if resolved != WORKDIR else parts
            current = WORKDIR
            continue
        current = candidate
    return current[len(WORKDIR) + 1:]


class SealedSandbox:
    """The end state of one run, plus the sandbox graders run their commands in: exactly
    what a grader may use (docs/graders.md), and nothing grading keeps on the way
    (that is `endstate.grading.Grading`'s).

    `read_text`, `exists`, `paths`, `changed_paths` and `tree_hash` answer from the
    snapshot taken at sealing. `run` executes in the grading sandbox, where held-out
    tests have been staged since. `fixture_text` reads the task's original fixture.
    """

    #: What a grader may use (docs/graders.md); a wrong name gets this list in its error.
    GRADER_API = ("read_text", "read_bytes", "exists", "is_link", "link_target", "paths", "mode", "tree",
                  "changed_paths", "escaping_links", "tree_hash", "fixture_text", "fixture_bytes",
                  "fixture_exists", "fixture_paths", "fixture_hash", "run")

    def __getattr__(self, name: str) -> object:
        # Called only when ordinary lookup failed: a grader's typo, or a method of another sandbox.
        if name.startswith("_"):
            raise AttributeError(name)
        close = difflib.get_close_matches(name, self.GRADER_API, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise AttributeError(f"the sealed end state has no {name!r}: {hint}a grader may use "
                             f"{', '.join(sorted(self.GRADER_API))}")

    def __init__(self, box: Sandbox | None, snapshot: Tree, fixture: Tree) -> None:
        self._box = box
        self._snapshot = dict(snapshot)
        self._fixture = without_caches(fixture)
        self.tree_hash = tree_hash(self._snapshot)
        self.fixture_hash = tree_hash(self._fixture)

    # -- the end state -------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        entry = self._snapshot.get(path)
        if entry is None or entry.link:
            raise FileNotFoundError(f"{path} is not a file in the sealed end state")
        return entry.data

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        return path in self._snapshot

    def is_link(self, path: str) -> bool:
        entry = self._snapshot.get(path)
        return entry is not None and bool(entry.link)

    def link_target(self, path: str) -> str:
        return self._snapshot[path].link

    def paths(self) -> list[str]:
        return sorted(self._snapshot)

    def mode(self, path: str) -> int:
        return self._snapshot[path].mode

    def tree(self) -> Tree:
        """The sealed tree itself (a copy): what the grading sandbox holds."""
        return dict(self._snapshot)

    def changed_paths(self) -> list[str]:
        """Paths added, removed, or changed in bytes, mode or kind, against the fixture."""
        changed = []
        for path in sorted(set(self._snapshot) | set(self._fixture)):
            before, after = self._fixture.get(path), self._snapshot.get(path)
            if before != after:
                changed.append(path)
        return changed

    def escaping_links(self) -> list[str]:
        """Links of the end state that lead (directly or through other links) out of the workspace."""
        return [f"{path} -> {entry.link}" for path, entry in sorted(self._snapshot.items())
                if entry.link and resolve_link(self._snapshot, path) is None]

    # -- the original -------------------------------------------------------------
    def fixture_text(self, path: str) -> str:
        try:
            return self._fixture[path].data.decode("utf-8", errors="replace")
        except KeyError:
            raise FileNotFoundError(f"{path} is not in the task's fixture") from None

    def fixture_bytes(self, path: str) -> bytes:
        try:
            return self._fixture[path].data
        except KeyError:
            raise FileNotFoundError(f"{path} is not in the task's fixture") from None

    def fixture_exists(self, path: str) -> bool:
        return path in self._fixture

    def fixture_paths(self) -> list[str]:
        return sorted(self._fixture)

    # -- commands, in the grading sandbox ----------------------------------------------
    def run(self, command: str, *, timeout: float | None = None) -> ExecResult:
        if self._box is None:
            raise RuntimeError("this sealed end state has no grading sandbox to run commands in")
        return self._box.exec(command, timeout=timeout)


def seal(stopped: Sandbox, fixture: Tree, *, max_bytes: int = SNAPSHOT_MAX_BYTES) -> SealedSandbox:
    """Snapshot a (stopped) sandbox's workspace, for file questions only; grading goes
    through `endstate.grading.seal_end_state`, which also prepares the grading sandbox.
    Raises SandboxError when the workspace holds more than `max_bytes`."""
    raw = stopped.get_tree(max_bytes=max_bytes, sealing=True)
    return SealedSandbox(None, without_caches(raw), fixture)
