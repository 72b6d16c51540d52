"""How one task's run ends before its end state is judged.

    TaskEnded            a stage settled the task: outcome, reason, what decided
    ├── NoEndState       the agent's part left nothing to grade (divergence, error, machinery, disk limit)
    └── EndStateRefused  the end state cannot be graded (not sealable, or it holds the fixture's history)

The runner's stages (prepare -> agent -> seal -> judge -> record) raise these instead of
filling the result by hand at each early return; one handler writes them into the result.
"""

from __future__ import annotations

from endstate.grading import Verdict
from endstate.run._results import RunOutcome

__all__ = ["TaskEnded", "NoEndState", "EndStateRefused"]


class TaskEnded(Exception):
    """A stage of one task's run settled it before the judge: its outcome, why, and what decided."""

    def __init__(self, outcome: RunOutcome, reason: str, failing_grader: str = "", *,
                 verdict: Verdict | None = None) -> None:
        super().__init__(reason)
        self.outcome, self.reason, self.failing_grader = outcome, reason, failing_grader
        #: The finding of `failing_grader`, when a stage stood in for it (sealing refused the end state).
        self.verdict = verdict


class NoEndState(TaskEnded):
    """The agent's part ended with nothing to grade: a divergence, an error, the machinery, a disk limit."""


class EndStateRefused(TaskEnded):
    """The end state exists but cannot be graded: it could not be sealed, or it holds the fixture's history."""
