"""The agent loop, its tools, the permission policy and checkpoints."""

from endstate.agent._loop import Agent, LimitsExceeded, ModelFailed, RunEnded, Submitted, estimate_tokens
from endstate.agent._normalise import normalise_output
from endstate.agent._policy import Decision, Policy
from endstate.agent._state import Counters, Guards, Journal, Pending, RunState
from endstate.agent._tools import FINISH_TOOL, TOOLS, ToolError, parse_arguments, run_tool

__all__ = [
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
]
