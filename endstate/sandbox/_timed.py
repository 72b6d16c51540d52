"""A sandbox wrapper that adds up the time spent inside it (the irreducible part of a run)."""

from __future__ import annotations

import time
from typing import Any

from endstate.sandbox._base import ExecResult, Sandbox, SandboxHandle
from endstate.sandbox._tree import Tree

__all__ = ["TimedSandbox"]


class TimedSandbox:
    """Delegates to a sandbox and accumulates wall seconds spent in its calls."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.seconds = 0.0

    def _timed(self, method: str, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return getattr(self.inner, method)(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start

    def exec(self, command: str, *, timeout: float | None = None) -> ExecResult:
        return self._timed("exec", command, timeout=timeout)

    def exec_wrapped(self, command: str, wrapper: list[str], *, timeout: float | None = None) -> ExecResult:
        return self._timed("exec_wrapped", command, wrapper, timeout=timeout)

    def ready(self) -> None:
        self._timed("ready")

    def read_file(self, path: str) -> bytes:
        return self._timed("read_file", path)

    def write_file(self, path: str, data: bytes) -> None:
        self._timed("write_file", path, data)

    def edit_file(self, path: str, old: str, new: str) -> int:
        return self._timed("edit_file", path, old, new)

    def put_tree(self, tree: Tree) -> None:
        self._timed("put_tree", tree)

    def get_tree(self, *, max_bytes: int | None = None, sealing: bool = False) -> Tree:
        return self._timed("get_tree", max_bytes=max_bytes, sealing=sealing)

    def stop(self) -> None:
        self._timed("stop")

    def describe(self) -> dict[str, str]:
        return self.inner.describe()

    def handle(self) -> SandboxHandle:
        return self.inner.handle()
