"""The sealed end state: what graders see.

`seal()` is called the moment the agent stops. It reads the whole workspace once,
hashes it and keeps the snapshot; every later question about the end state is
answered from that snapshot, so files staged afterwards (held-out tests) or
written by a grader's own command cannot change what the end state was.
"""

from __future__ import annotations

import fnmatch

from endstate.sandbox._base import ExecResult, Sandbox
from endstate.sandbox._tree import Tree, tree_hash

__all__ = ["SealedSandbox", "seal", "matches_any", "without_caches", "CACHE_DIRS"]


def matches_any(path: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """Glob match where `dir/**` covers everything below `dir`."""
    for pattern in patterns:
        if fnmatch.fnmatchcase(path, pattern):
            return True
        if pattern.endswith("/**") and (path + "/").startswith(pattern[:-2]):
            return True
    return False


class SealedSandbox:
    """The end state of one run, plus a way to run commands against it.

    `read_text`, `exists`, `paths`, `changed_paths` and `tree_hash` answer from the
    snapshot taken at sealing. `run` executes in the live sandbox, where held-out
    tests may have been staged since. `fixture_text` reads the task's original
    fixture.
    """

    def __init__(self, live: Sandbox, snapshot: Tree, fixture: Tree) -> None:
        self._live = live
        self._snapshot = dict(snapshot)
        self._fixture = dict(fixture)
        self.tree_hash = tree_hash(self._snapshot)
        self.fixture_hash = tree_hash(self._fixture)

    # -- the end state -------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        try:
            return self._snapshot[path].data
        except KeyError:
            raise FileNotFoundError(f"{path} is not in the sealed end state") from None

    def read_text(self, path: str) -> str:
        return self.read_bytes(path).decode("utf-8", errors="replace")

    def exists(self, path: str) -> bool:
        return path in self._snapshot

    def paths(self) -> list[str]:
        return sorted(self._snapshot)

    def mode(self, path: str) -> int:
        return self._snapshot[path].mode

    def changed_paths(self) -> list[str]:
        """Paths added, removed, or changed in bytes or mode, against the fixture."""
        changed = []
        for path in sorted(set(self._snapshot) | set(self._fixture)):
            before, after = self._fixture.get(path), self._snapshot.get(path)
            if before != after:
                changed.append(path)
        return changed

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

    # -- commands -----------------------------------------------------------------
    def run(self, command: str, *, timeout: float | None = None) -> ExecResult:
        return self._live.exec(command, timeout=timeout)


#: Caches that running Python or pytest leaves behind: not part of anyone's end state.
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache"})


def without_caches(tree: Tree) -> Tree:
    return {
        path: entry for path, entry in tree.items()
        if not path.endswith(".pyc") and not CACHE_DIRS.intersection(path.split("/")[:-1])
    }


def seal(live: Sandbox, fixture: Tree) -> SealedSandbox:
    """Snapshot the workspace now; call before staging anything for grading.

    Interpreter and test-runner caches are left out of the snapshot (and so of the
    tree hash and of changed paths): running the tests is not a change.
    """
    return SealedSandbox(live, without_caches(live.get_tree()), fixture)
