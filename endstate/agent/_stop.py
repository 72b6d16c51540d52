"""Why an agent's run stopped: one vocabulary for the agent loop, foreign agents and the runner.

results.json and the transcripts hold the value (a StrEnum member encodes as its string), so a
result reads the same as before the names were typed.
"""

from __future__ import annotations

import enum

__all__ = ["StopReason"]


class StopReason(enum.StrEnum):
    #: The model stopped calling tools, or called `finish` (a foreign agent: it exited 0 on an answer).
    MODEL_STOPPED = "model_stopped"
    #: The loop ended for no more specific reason.
    ENDED = "ended"
    #: The model's API failed past its retries.
    MODEL_ERROR = "model_error"
    #: The budget's limits (steps, wall clock, repetition, context, disk).
    MAX_STEPS = "max_steps"
    WALL_CLOCK = "wall_clock"
    REPETITION = "repetition"
    CONTEXT_OVERFLOW = "context_overflow"
    DISK_LIMIT = "disk_limit"
    #: A foreign agent ran past its wall budget and was killed, reported its own failure, or crashed.
    WALL_BUDGET = "wall_budget"
    AGENT_STOPPED = "agent_stopped"
    AGENT_ERROR = "agent_error"
    #: The task's input could not be used (a bad fixture or policy file).
    INPUT_ERROR = "input_error"
    #: endstate itself broke.
    HARNESS_ERROR = "harness_error"
    #: The machinery under the task failed (engine, worker, disk): unscored. Also a task outcome.
    INFRA_ERROR = "infra_error"
    #: Refused before it started (the task's requirements cannot be met).
    REFUSED = "refused"
