"""What a run writes: `results.json`, versioned, and the pass/fail vector."""

from __future__ import annotations

from pathlib import Path

import msgspec

from endstate.agent._state import Counters

__all__ = ["FORMAT_VERSION", "RunCard", "GraderVerdict", "TaskResult", "RunResult", "vector_of",
           "write_results", "read_results"]

FORMAT_VERSION = 1


class RunCard(msgspec.Struct, frozen=True):
    """Everything needed to say what was run, and to run it again."""

    endstate_version: str
    model: str
    provider: str
    temperature: float
    seed: int | None
    retry_ceiling: int
    tool_choice: str
    network_policy: str
    sandbox_backend: str
    image: str
    image_id: str
    task_pack_hash: str
    tasks: int
    mode: str = "live"
    replay_from: str = ""
    match: str = ""
    guards_disabled: tuple[str, ...] = ()
    #: Task id -> image id, for tasks that run in their own image ([sandbox] in task.toml).
    task_images: dict[str, str] = {}


class GraderVerdict(msgspec.Struct, frozen=True):
    grader: str
    outcome: str
    reason: str = ""


class TaskResult(msgspec.Struct):
    task_id: str
    category: str
    #: pass | fail | error | divergence
    outcome: str
    reason: str = ""
    failing_grader: str = ""
    stop_reason: str = ""
    counters: Counters = msgspec.field(default_factory=Counters)
    verdicts: list[GraderVerdict] = []
    requires_violations: list[str] = []
    tree_hash: str = ""
    wall_s: float = 0.0
    sandbox_s: float = 0.0
    unplayed: int = 0


class RunResult(msgspec.Struct):
    card: RunCard
    tasks: list[TaskResult]
    format_version: int = FORMAT_VERSION

    @property
    def vector(self) -> list[tuple[str, str]]:
        return vector_of(self.tasks)


def vector_of(tasks: list[TaskResult]) -> list[tuple[str, str]]:
    """Task id and outcome, sorted by id: the value two runs are compared by."""
    return sorted((t.task_id, t.outcome) for t in tasks)


def write_results(result: RunResult, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = msgspec.to_builtins(result)
    payload["vector"] = [list(pair) for pair in result.vector]
    path = out_dir / "results.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(payload), indent=2) + b"\n")
    tmp.replace(path)
    return path


def read_results(path: Path) -> RunResult:
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    raw = msgspec.json.decode(path.read_bytes())
    raw.pop("vector", None)
    return msgspec.convert(raw, RunResult)
