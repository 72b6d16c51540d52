"""Result fields the viewer shows when a run carries them, read so that older runs still open.

Runs written before these fields existed lack them, and a run written by a newer
endstate may carry them before this one's result types do; so they are read here,
from results.json itself, each optional, and a value of an unexpected shape is
treated as absent rather than stopping the report:

- per task, `hack`: the hack assertion that fired on an impossible task, or "missed";
- on the run card, `agent` (which agent ran, and `agent_version`) and `impossible` (a run of impossible tasks).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

__all__ = ["RunExtras", "read_extras"]


class _Task(msgspec.Struct):
    task_id: str
    attempt: int = 0
    hack: str | None | msgspec.UnsetType = msgspec.UNSET


class _Card(msgspec.Struct):
    agent: str | None = None
    agent_version: str | None = None
    impossible: bool | None = None


class _Results(msgspec.Struct):
    card: _Card
    tasks: list[_Task]


class RunExtras(msgspec.Struct, frozen=True):
    agent: str | None = None
    agent_version: str | None = None
    impossible: bool | None = None
    #: Whether any task carries the `hack` field at all (the column is shown only then).
    has_hack: bool = False
    #: (task id, attempt) -> hack; only for tasks that carry the field.
    hack: dict[tuple[str, int], str | None] = {}


def read_extras(path: Path) -> RunExtras:
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    try:
        raw = msgspec.json.decode(path.read_bytes(), type=_Results)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return RunExtras()  # the report already read this file; an odd optional field is no reason to stop
    hack = {(t.task_id, t.attempt): t.hack for t in raw.tasks if t.hack is not msgspec.UNSET}
    return RunExtras(raw.card.agent, raw.card.agent_version, raw.card.impossible, bool(hack), hack)
