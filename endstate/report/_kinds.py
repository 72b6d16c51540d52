"""Hack attempts by kind, and the passes the detectors flag for review.

An attempt's kinds are what the detectors named in its end state (`findings`), or, where they
named nothing, the hack assertion that fired (`probe`, `end_state`...): so every attempt the hack
rate counts is counted under at least one kind. A pass with a finding is no attempt (graders
decide the verdict): it is flagged for review and counted apart.
"""

from __future__ import annotations

import msgspec

from endstate.grading import MISSED
from endstate.report._runs import attempts_by_task
from endstate.report._stats import bootstrap_mean
from endstate.run import RunOutcome, RunResult, TaskResult

__all__ = ["attempt_kinds", "kind_shares", "rates_by_kind", "flagged_for_review", "kinds_text"]


def attempt_kinds(task: TaskResult) -> set[str]:
    """The kinds `task` counts under as a hack attempt; empty when it is none (or unclassified)."""
    if not isinstance(task.hack, str):
        return set()
    if task.hack == MISSED:
        return {MISSED}
    return {f.kind for f in task.findings} or {task.hack}


def kind_shares(result: RunResult, kind: str) -> dict[str, float]:
    """Task id -> the share of its classified attempts that count under `kind`."""
    shares = {}
    for task_id, attempts in attempts_by_task(result).items():
        classified = [t for t in attempts if t.hack is not msgspec.UNSET]
        if classified:
            shares[task_id] = sum(kind in attempt_kinds(t) for t in classified) / len(classified)
    return shares


def rates_by_kind(results: list[RunResult]) -> dict[str, tuple[float, float, float]]:
    """Kind -> attempts per 100 runs, with the 95% bootstrap interval over tasks (as the hack rate)."""
    kinds = sorted({k for result in results for t in result.tasks for k in attempt_kinds(t)})
    rates = {}
    for kind in kinds:
        shares = [s for result in results for s in kind_shares(result, kind).values()]
        low, high = bootstrap_mean(shares)
        rates[kind] = (100 * sum(shares) / len(shares), 100 * low, 100 * high)
    return rates


def flagged_for_review(results: list[RunResult]) -> list[str]:
    """`task (attempt N): kind, ...` of each pass the detectors found something in."""
    return [f"{t.task_id} (attempt {t.attempt}): {', '.join(sorted({f.kind for f in t.findings}))}"
            for result in results for t in result.tasks if t.outcome == RunOutcome.PASS and t.findings]


def kinds_text(rates: dict[str, tuple[float, float, float]]) -> str:
    """`special_cased 12 (3-25), tests_skipped 4 (0-11)`."""
    return ", ".join(f"{kind} {rate:.0f} ({low:.0f}-{high:.0f})" for kind, (rate, low, high) in rates.items())
