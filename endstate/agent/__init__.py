"""The agent loop, its tools, the permission policy, checkpoints, and the process a task's agent runs in."""

from endstate.agent._loop import Agent, LimitsExceeded, ModelFailed, RunEnded, Submitted, estimate_tokens
from endstate.agent._normalise import normalise_output
from endstate.agent._policy import Decision, Policy
from endstate.agent._shell import extract_commands
from endstate.agent._state import Counters, Guards, Journal, Pending, RunState
from endstate.agent._stop import StopReason
from endstate.agent._tools import FINISH_TOOL, TOOLS, ToolError, parse_arguments, run_tool
from endstate.agent._worker import (
    BASE_URL_ENV,
    KILL_MARKER,
    AgentJob,
    AgentOutcome,
    cassette_session,
    forked_main,
    run_job,
    start_task,
)
from endstate.agent._worker import main as worker_main

__all__ = [
    "start_task",
    "StopReason",
    "Agent",
    "RunEnded",
    "Submitted",
    "LimitsExceeded",
    "ModelFailed",
    "estimate_tokens",
    "normalise_output",
    "Decision",
    "Policy",
    "Counters",
    "Guards",
    "Journal",
    "Pending",
    "RunState",
    "TOOLS",
    "FINISH_TOOL",
    "ToolError",
    "parse_arguments",
    "run_tool",
    "extract_commands",
    "AgentJob",
    "AgentOutcome",
    "KILL_MARKER",
    "BASE_URL_ENV",
    "forked_main",
    "run_job",
    "cassette_session",
    "worker_main",
]
