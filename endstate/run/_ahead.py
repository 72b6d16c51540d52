"""Sandboxes made ahead of their task and removed behind it, off the critical path.

Creating and starting a container and writing the fixture into it (~250 ms), and
removing it afterwards (~50 ms per container), are the same whatever the agent does.
A run therefore makes the sandboxes of the tasks queued next while the current ones
work, and removes finished ones in the background:

    task p starts -> takes its sandbox (made already, or waited for)
                  -> the sandboxes of tasks p+1 .. p+depth are made in the background
    task p ends   -> its sandboxes are handed to `remove` and removed in the background
    run ends      -> sandboxes made but never taken (cancel, Ctrl-C, an exception) are
                     removed too, and `close` returns only once every removal is done.

An error while making a sandbox is raised by `take`, in the thread of the task it
belongs to, exactly as if that thread had made it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from endstate.sandbox import Sandbox

__all__ = ["Lookahead"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Lookahead(Generic[K, T]):
    """Makes `prepare(key)` for the keys of `order` a few steps ahead of `take(key)`;
    `dispose` undoes one that was made and never taken."""

    def __init__(self, order: list[K], prepare: Callable[[K], T], dispose: Callable[[T], None], depth: int) -> None:
        self._order = list(order)
        self._position = {key: index for index, key in enumerate(self._order)}
        self._prepare, self._dispose = prepare, dispose
        self._depth = max(1, depth)
        self._making = ThreadPoolExecutor(max_workers=self._depth, thread_name_prefix="sandbox-ahead")
        self._removing = ThreadPoolExecutor(max_workers=self._depth, thread_name_prefix="sandbox-removal")
        self._ahead: dict[K, Future[T]] = {}
        self._taken: set[K] = set()
        self._lock = threading.Lock()
        self._closed = False

    def take(self, key: K) -> tuple[T, float]:
        """What `prepare(key)` made (or raised), and the seconds spent waiting for it.
        Starts making the next `depth` keys of the order."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the run's sandboxes are closed already")
            start = self._position.get(key)
            upcoming = [key] if start is None else self._order[start:start + 1 + self._depth]
            for later in upcoming:
                if later not in self._ahead and later not in self._taken:
                    self._ahead[later] = self._making.submit(self._prepare, later)
            future = self._ahead.pop(key)
            self._taken.add(key)
        waited = time.perf_counter()
        made = future.result()
        return made, time.perf_counter() - waited

    def remove(self, close: Callable[[], None]) -> None:
        """Run `close` (a sandbox's removal) in the background; `close()` waits for it."""
        self._removing.submit(close)

    @contextlib.contextmanager
    def removing(self, sandbox: Sandbox) -> Iterator[Sandbox]:
        """`with`: the sandbox is removed in the background when the block ends, however it ends."""
        try:
            yield sandbox
        finally:
            self.remove(sandbox.close)

    def close(self) -> None:
        """Remove what was made and never taken, then wait for every removal. Call it
        once no task runs any more (their removals are queued by then)."""
        with self._lock:
            self._closed = True
            left, self._ahead = list(self._ahead.values()), {}
        for future in left:
            if not future.cancel():
                self._removing.submit(self._dispose_made, future)
        self._making.shutdown(wait=True)
        self._removing.shutdown(wait=True)

    def _dispose_made(self, future: Future[T]) -> None:
        try:
            made = future.result()
        except BaseException:
            return  # nothing was made, or what was made is gone with the error
        self._dispose(made)
