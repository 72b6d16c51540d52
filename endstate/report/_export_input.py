"""A run folder read for export: results.json for the verdicts and counters,
transcripts/<task>.json for the conversation, and the values both exporters derive from
them (ids, the run's finishing time, the reward and its explanation).

Nothing here reads the clock or draws a random id, so a folder read twice reads the same:
ids are derived from the bytes of results.json and the attempt's file stem, and the one
time a log must carry is when results.json was last written (the run's finishing time).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import datetime, timezone
from pathlib import Path

import msgspec

from endstate.errors import UserError
from endstate.grading import Outcome
from endstate.report._runs import load_run
from endstate.run import RunFolder, RunOutcome, RunResult, TaskResult, attempt_stem

__all__ = ["RunExport", "ExportedAttempt", "read_export_input", "reward", "explanation", "verdict_record"]

# Fixed namespace for the ids derived below: any constant will do, this one is endstate's.
_NAMESPACE = uuid.UUID("6f1c3c1e-5a52-4d0e-9a59-0e6d1e5e7a39")


class ExportedAttempt(msgspec.Struct, frozen=True):
    """One task attempt as both exporters read it."""

    result: TaskResult
    stem: str
    #: The transcript as the runner wrote it: role, content, tool_calls, tool_call_id.
    messages: list[dict]
    #: Deterministic id of this attempt in this run (a UUID string).
    session_id: str


class RunExport(msgspec.Struct, frozen=True):
    """A run folder read for export."""

    folder: Path
    run: RunResult
    attempts: list[ExportedAttempt]
    #: Attempt stem -> why it was left out ("no transcript at ...").
    missing: dict[str, str]
    #: Deterministic id of the run (a UUID string).
    run_id: str
    #: When results.json was last written, ISO 8601 in UTC: the run's own finishing time.
    finished_at: str


def read_export_input(folder: Path) -> RunExport:
    """Read results.json and each attempt's transcript; raise UserError for a folder that is no run."""
    folder = Path(folder)
    if folder.name == "results.json" and folder.is_file():  # as `view` and `report` take it
        folder = folder.parent
    if not folder.is_dir():
        raise UserError(f"{folder}: no such folder (pass a run folder written by `endstate eval --out`)")
    run = load_run(folder)
    folder = folder.resolve()  # the run is named by its folder: `export .` names it too
    results_path = folder / "results.json"
    digest = hashlib.sha256(results_path.read_bytes()).hexdigest()
    finished = datetime.fromtimestamp(int(results_path.stat().st_mtime), tz=timezone.utc)
    attempts, missing = [], {}
    for result in sorted(run.tasks, key=lambda t: (t.task_id, t.attempt)):
        stem = attempt_stem(result.task_id, result.attempt)
        messages, why = _transcript(RunFolder(folder).transcript(stem))
        if messages is None:
            missing[stem] = why
            continue
        attempts.append(ExportedAttempt(result, stem, messages, str(uuid.uuid5(_NAMESPACE, f"{digest}/{stem}"))))
    return RunExport(folder, run, attempts, missing, str(uuid.uuid5(_NAMESPACE, digest)), finished.isoformat())


def _transcript(path: Path) -> tuple[list[dict] | None, str]:
    try:
        messages = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"no transcript at {path} (the task's agent never ran, or the file was removed)"
    except (OSError, ValueError) as exc:
        return None, f"{path} is not a readable transcript ({exc})"
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return None, f"{path} is not a transcript (a JSON list of messages)"
    return messages, ""


def reward(result: TaskResult) -> float | None:
    """1.0 for a pass, 0.0 for any other scored outcome, None where the machinery failed (unscored)."""
    if result.outcome == RunOutcome.INFRA_ERROR:
        return None
    return 1.0 if result.outcome == RunOutcome.PASS else 0.0


def explanation(result: TaskResult) -> str:
    """One line a reader of another tool's viewer gets the verdict from, naming the failing graders."""
    if result.outcome == RunOutcome.PASS:
        return "PASS: every grader passed (" + ", ".join(v.grader for v in result.verdicts) + ")"
    failing = [v for v in result.verdicts if v.outcome != Outcome.PASS]
    named = "; ".join(f"{v.grader}: {v.reason}" if v.reason else v.grader for v in failing)
    head = f"{result.outcome.upper()}"
    if named:
        return f"{head}: failing graders: {named}"
    return f"{head}: {result.reason}" if result.reason else head


def verdict_record(result: TaskResult) -> dict:
    """The verdict and the harness's records of one attempt, as plain JSON values."""
    record = {
        "task_id": result.task_id, "attempt": result.attempt, "category": result.category,
        "outcome": result.outcome, "reward": reward(result), "explanation": explanation(result),
        "failing_grader": result.failing_grader, "reason": result.reason,
        "verdicts": [msgspec.to_builtins(v) for v in result.verdicts],
        "stop_reason": result.stop_reason, "tree_hash": result.tree_hash,
        "counters": msgspec.to_builtins(result.counters), "wall_s": result.wall_s,
    }
    if result.hack is not msgspec.UNSET:
        record["hack"] = result.hack
    return record
