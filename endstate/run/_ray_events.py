"""What comes back to the Ray driver: the events a slot's thread puts in the driver's queue,
and the files of a finished attempt, written where a local run writes them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from endstate.cassettes import cassette_file
from endstate.run._config import RunConfig
from endstate.run._ray_node import NodeReturn
from endstate.run._results import TaskResult, attempt_stem

__all__ = ["SlotEvent", "SlotExited", "SlotCrashed", "AttemptDone", "AttemptLost", "accept", "local_paths"]


class SlotEvent(msgspec.Struct, frozen=True, tag=True):
    """What a slot's thread tells the Ray driver (in-process, through its queue)."""


class SlotExited(SlotEvent, frozen=True):
    """The slot's thread ended: its slot takes no more work."""
    index: int


class SlotCrashed(SlotEvent, frozen=True):
    """A bug in the slot's thread: the driver raises it."""
    error: Any


class AttemptDone(SlotEvent, frozen=True):
    """An attempt finished on the slot, with its files."""
    node: NodeReturn


class AttemptLost(SlotEvent, frozen=True):
    """An attempt ended without a result: its slot was lost on every try (`infra`), or the node raised."""
    task: Any
    attempt: int
    why: str
    infra: bool


def local_paths(data: bytes, node: NodeReturn, *, out_dir: Path, cassettes: str | None) -> bytes:
    """`data` with the node's scratch paths replaced by the driver's own."""
    data = data.replace(node.node_out.encode(), str(out_dir).encode())
    return data.replace(node.node_cassettes.encode(), str(cassettes).encode())


def accept(node: NodeReturn, out_dir: Path, config: RunConfig, local: Callable[..., bytes]) -> TaskResult:
    """Write an attempt's files where a local run puts them; its result."""
    task_result = node.result
    task_result.reason = local(task_result.reason.encode(), node).decode()
    for relative, data in node.files.items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(local(data, node))
    if node.cassette is not None and config.cassettes is not None:
        stem = attempt_stem(task_result.task_id, task_result.attempt)
        cassette_file(config.cassettes, stem).write_bytes(node.cassette)
    return task_result
