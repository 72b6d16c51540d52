"""Reading run folders for reports: one clear error for an unreadable one, and tasks
grouped with their attempts."""

from __future__ import annotations

from pathlib import Path

import msgspec

from endstate.errors import UserError
from endstate.run import RunCard, RunResult, TaskResult, read_results

__all__ = ["load_run", "attempts_by_task", "grader_sets", "same_grading", "hack_shares", "agent_label", "run_label",
           "tasks_hash"]


def load_run(folder: Path) -> RunResult:
    try:
        return read_results(Path(folder))
    except FileNotFoundError:
        raise UserError(f"{folder}: no results.json there (pass a run folder written by `endstate eval`)") from None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise UserError(f"{folder}: not a readable results.json ({exc})") from None


def attempts_by_task(result: RunResult) -> dict[str, list[TaskResult]]:
    """Task id -> its attempts in attempt order, task ids sorted."""
    grouped: dict[str, list[TaskResult]] = {}
    for task in sorted(result.tasks, key=lambda t: (t.task_id, t.attempt)):
        grouped.setdefault(task.task_id, []).append(task)
    return grouped


def hack_shares(result: RunResult) -> dict[str, float]:
    """Task id -> the share of its classified attempts on which a hack assertion fired (or an
    impossible task passed); tasks with no classified attempt (older results) are left out."""
    shares = {}
    for task_id, attempts in attempts_by_task(result).items():
        classified = [t for t in attempts if t.hack is not msgspec.UNSET]
        if classified:
            shares[task_id] = sum(t.hack is not None for t in classified) / len(classified)
    return shares


def grader_sets(result: RunResult) -> dict[str, tuple[str, ...]]:
    """Task id -> the graders that judged it: from the card, or (older results) from the verdicts."""
    if result.card.graders:
        return {k: tuple(v) for k, v in result.card.graders.items()}
    return {t.task_id: tuple(v.grader for v in t.verdicts) for t in result.tasks if t.verdicts}


def same_grading(a: RunResult, b: RunResult) -> str:
    """'' when both runs graded their shared tasks with the same graders, else what differs."""
    ga, gb = grader_sets(a), grader_sets(b)
    for task_id in sorted(set(ga) & set(gb)):
        if sorted(ga[task_id]) != sorted(gb[task_id]):
            return (f"task {task_id} is graded by [{', '.join(ga[task_id])}] in one run and "
                    f"[{', '.join(gb[task_id])}] in the other")
    return ""


def agent_label(agent: str, version: object = "") -> str:
    """Who drove the model, as a reader names it: "endstate" (its own loop) or a foreign agent's
    name and version ("codex 0.171.0"); its id (name@hash of its file) when the run card has no
    version (runs written before cards carried one)."""
    if agent in ("", "endstate") or not isinstance(version, str) or not version:
        return agent or "endstate"
    return f"{agent.partition('@')[0]} {version}"


def run_label(card: RunCard) -> str:
    """The model, and the agent that drove it when that is not endstate's own loop."""
    if card.agent in ("", "endstate"):
        return card.model
    return f"{agent_label(card.agent, card.agent_version)} on {card.model}"


def tasks_hash(card: RunCard) -> str:
    """The hash of the tasks alone: two agents' runs of the same tasks share it (their
    task_pack_hash differs, for it names the agent)."""
    return card.tasks_hash if isinstance(card.tasks_hash, str) and card.tasks_hash else card.task_pack_hash
