"""Which tasks a foreign agent cannot be graded on: those whose `requires` bound a counter the
harness cannot observe from outside the agent (its tool calls, refusals, compactions, resumes)."""

from __future__ import annotations

from typing import Any

from endstate.agents._spec import OBSERVABLE_COUNTERS, AgentSpec

__all__ = ["refusal"]


def refusal(task: Any, spec: AgentSpec | None) -> str:
    """Why `task` cannot run with agent `spec` ("" when it can, and always for endstate's loop)."""
    if spec is None:
        return ""
    needs = [name for name in task.manifest.requires.bounds() if name not in OBSERVABLE_COUNTERS]
    if task.manifest.kill_at is not None and "resumes" not in needs:
        needs.append("resumes (it kills and resumes the agent at a tool call)")
    if not needs:
        return ""
    return (f"refused: task {task.id} requires {', '.join(needs)}, which the harness cannot count for agent "
            f"{spec.name} (it sees only model turns and token usage: {', '.join(OBSERVABLE_COUNTERS)}); "
            "run it with endstate's own loop")
