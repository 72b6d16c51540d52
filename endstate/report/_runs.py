"""Reading run folders for reports: one clear error for an unreadable one, and tasks
grouped with their attempts."""

from __future__ import annotations

from pathlib import Path

import msgspec

from endstate.errors import UserError
from endstate.run import RunResult, TaskResult, read_results

__all__ = ["load_run", "attempts_by_task", "grader_sets", "same_grading", "hack_shares"]


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
