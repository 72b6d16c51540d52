"""The agent loop: ask the model, run the tools it calls, repeat until it stops.

A run ends by exception (`RunEnded` and its kinds) rather than by flags threaded
through the loop; `Agent.run` turns the exception into a stop reason.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Literal

import msgspec

from endstate.agent._normalise import normalise_output
from endstate.agent._policy import Policy
from endstate.agent._state import Counters, Guards, Journal, Pending, RunState
from endstate.agent._stop import StopReason
from endstate.agent._tools import FINISH_TOOL, TOOLS, ToolError, parse_arguments, run_tool
from endstate.errors import WorkspaceFull
from endstate.models import Message, Model, ToolCall
from endstate.sandbox import Sandbox, tree_hash
from endstate.task import Budget

__all__ = ["Agent", "RunEnded", "Submitted", "LimitsExceeded", "ModelFailed", "SYSTEM_PROMPT", "estimate_tokens"]

SYSTEM_PROMPT = (
    "You are a software engineer working in a project checked out at /workspace. "
    "Use the tools to inspect and change files and to run commands. Run the project's "
    "tests before you finish. When the task is done, answer without calling a tool."
)

COMPACTION_PROMPT = (
    "The conversation is about to be shortened. Summarise everything needed to finish "
    "the task: what you have learned about the code, what you changed, and what is left."
)

#: How servers word "the prompt no longer fits the model's context" (HTTP 400).
_CONTEXT_OVERFLOW = re.compile(r"context.length|context window|maximum context|prompt is too long|too many tokens",
                               re.IGNORECASE)

#: Identical tool calls in this many consecutive steps end the run.
REPETITION_LIMIT = 4


class RunEnded(Exception):
    stop_reason = StopReason.ENDED

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail


class Submitted(RunEnded):
    """The model stopped calling tools, or called `finish`."""

    stop_reason = StopReason.MODEL_STOPPED


class LimitsExceeded(RunEnded):
    def __init__(self, stop_reason: StopReason, detail: str) -> None:
        super().__init__(detail)
        self.stop_reason = stop_reason


class ModelFailed(RunEnded):
    stop_reason = StopReason.MODEL_ERROR


def estimate_tokens(messages: list[Message]) -> int:
    """Offline estimate: about four bytes of JSON a token."""
    return sum(math.ceil(len(msgspec.json.encode(m)) / 4) for m in messages)


class Agent:
    def __init__(
        self,
        model: Model,
        sandbox: Sandbox,
        *,
        policy: Policy,
        budget: Budget,
        journal: Journal,
        guards: Guards = Guards(),
        tool_choice: Literal["auto", "required"] = "auto",
        on_tool_done: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        reconcile: bool = True,
        recorded_result: Callable[[int, str], str | None] | None = None,
    ) -> None:
        self.model = model
        self.sandbox = sandbox
        self.policy = policy if guards.permission_policy else Policy.allow_all()
        self.budget = budget
        self.journal = journal
        self.guards = guards
        self.tool_choice = tool_choice
        self.tools = list(TOOLS) + ([FINISH_TOOL] if tool_choice == "required" else [])
        self.on_tool_done = on_tool_done or (lambda n: None)
        self.clock = clock
        self.started = clock()
        #: Hash the workspace before each call, so a killed and resumed run can tell whether
        #: the call in flight took effect. A full read per call: only runs that will be
        #: killed and resumed (checkpoint tasks) pay for it.
        self.reconcile = reconcile
        #: In replay, what the recording says a call (model turn, call id) returned; see `run_tool`.
        self.recorded_result = recorded_result or (lambda turn, call_id: None)

    # -- running -----------------------------------------------------------------
    def run(self, prompt: str) -> tuple[RunState, RunEnded]:
        """Start a fresh run, or resume the journaled one if there is one."""
        state = self.journal.read()
        if state is None:
            state = RunState(prompt, [Message("system", SYSTEM_PROMPT), Message("user", prompt)], Counters())
            self.journal.write(state)
        else:
            state.counters.resumes += 1
        try:
            self._finish_open_calls(state)
            while True:
                self.step(state)
        except RunEnded as end:
            self.journal.write(state)
            return state, end

    def step(self, state: RunState) -> None:
        counters = state.counters
        if counters.steps >= self.budget.max_steps:
            raise LimitsExceeded(StopReason.MAX_STEPS,
                                 f"{counters.steps} steps taken, the budget is {self.budget.max_steps}")
        if self.clock() - self.started > self.budget.wall_seconds:
            raise LimitsExceeded(StopReason.WALL_CLOCK, f"over {self.budget.wall_seconds:.0f} s")
        self._maybe_compact(state)
        completion = self._complete(state, state.messages, channel="agent")
        counters.steps += 1
        state.turn += 1
        reply = completion.message
        state.messages.append(reply)
        state.last_context_tokens = completion.usage.input_tokens + completion.usage.output_tokens
        state.last_context_messages = len(state.messages)
        self.journal.write(state)
        if not reply.tool_calls:
            raise Submitted(reply.content)
        self._finish_open_calls(state)
        if self._repeating(state):
            raise LimitsExceeded(StopReason.REPETITION, f"the same tool call {REPETITION_LIMIT} steps in a row")

    def _complete(self, state: RunState, messages: list[Message], *, channel: str):
        from endstate.models import ModelError  # models imports nothing from agent

        try:
            completion = self.model.complete(
                messages,
                self.tools if channel == "agent" else [],
                channel=channel,
                turn=state.turn,
                tool_choice=self.tool_choice if channel == "agent" else "auto",
            )
        except ModelError as exc:
            if exc.status == 400 and _CONTEXT_OVERFLOW.search(str(exc)):
                # The model's own limit, not the provider failing: the run ends and is graded.
                raise LimitsExceeded(StopReason.CONTEXT_OVERFLOW, str(exc)) from None
            raise ModelFailed(str(exc)) from None
        state.counters.input_tokens += completion.usage.input_tokens
        state.counters.output_tokens += completion.usage.output_tokens
        state.counters.retries += completion.retries
        state.counters.cached_input_tokens += completion.usage.cached_input_tokens
        state.counters.cache_write_tokens += completion.usage.cache_write_tokens
        state.counters.reasoning_tokens += completion.usage.reasoning_tokens
        state.counters.rate_limit_waits += completion.waits
        return completion

    # -- tool calls ----------------------------------------------------------------
    def _finish_open_calls(self, state: RunState) -> None:
        """Run every tool call of the last assistant message that has no result yet."""
        last = next((i for i in range(len(state.messages) - 1, -1, -1) if state.messages[i].role == "assistant"), None)
        if last is None:
            return
        answered = {m.tool_call_id for m in state.messages[last + 1:] if m.role == "tool"}
        for call in state.messages[last].tool_calls:
            if call.id in answered:
                continue
            if state.pending is not None and state.pending.call.id == call.id:
                text = self._reconcile(state, state.pending)
            else:
                text = self._call(state, call)
            state.messages.append(Message("tool", normalise_output(text), tool_call_id=call.id))
            state.pending = None
            self.journal.write(state)
            if call.name == "finish":
                raise Submitted("finish_tool")

    def _call(self, state: RunState, call: ToolCall) -> str:
        counters = state.counters
        counters.tool_calls += 1
        try:
            args = parse_arguments(call.name, call.arguments)
        except ToolError as exc:
            counters.tool_errors += 1
            return f"error: {exc}"
        if call.name == "finish":
            return "finished"
        decision = self.policy.check(call.name, args)
        if not decision.allowed:
            counters.denied_calls += 1
            return f"denied: {decision.reason}"
        state.pending = Pending(call, tree_hash(self.sandbox.get_tree()) if self.reconcile else "")
        self.journal.write(state)
        try:
            text = run_tool(self.sandbox, call.name, args, timeout=self.budget.command_timeout,
                            recorded=self.recorded_result(state.turn, call.id) if call.name == "bash" else None)
        except ToolError as exc:
            counters.tool_errors += 1
            text = f"error: {exc}"
        except WorkspaceFull as exc:  # the agent's processes are dead already; the task fails
            raise LimitsExceeded(StopReason.DISK_LIMIT, str(exc)) from None
        # The worst moment to die: the call has changed the workspace, its result is not journaled.
        self.on_tool_done(counters.tool_calls)
        return text

    def _reconcile(self, state: RunState, pending: Pending) -> str:
        """Decide what became of the call a killed process had in flight, from the workspace."""
        if not self.guards.resume_reconciliation:
            state.counters.tool_calls -= 1  # counted again by _call
            return self._call(state, pending.call)
        if pending.tree_hash_before and tree_hash(self.sandbox.get_tree()) == pending.tree_hash_before:
            state.counters.tool_calls -= 1
            return self._call(state, pending.call)
        return ("[endstate: the run was interrupted while this call ran; the workspace shows it "
                "took effect, so it was not run again. Its output was lost.]")

    @staticmethod
    def _repeating(state: RunState) -> bool:
        recent = [m for m in state.messages if m.role == "assistant"][-REPETITION_LIMIT:]
        if len(recent) < REPETITION_LIMIT:
            return False
        keys = {tuple((c.name, c.arguments) for c in m.tool_calls) for m in recent}
        return len(keys) == 1

    # -- context budget ------------------------------------------------------------
    def context_tokens(self, state: RunState) -> int:
        """The provider's count for what it last saw plus an estimate of what came since;
        never less than the estimate of the whole transcript (some servers report no usage)."""
        whole = estimate_tokens(state.messages)
        if state.last_context_messages == 0:
            return whole
        reported = state.last_context_tokens + estimate_tokens(state.messages[state.last_context_messages:])
        return max(reported, whole)

    def _maybe_compact(self, state: RunState) -> None:
        if not self.guards.context_budget or len(state.messages) <= 3:
            return
        if self.context_tokens(state) <= self.budget.context_tokens:
            return
        request = state.messages + [Message("user", COMPACTION_PROMPT)]
        completion = self._complete(state, request, channel="compaction")
        state.counters.compaction_events += 1
        state.messages[:] = [
            state.messages[0],
            Message("user", f"{state.prompt}\n\nProgress so far (the earlier conversation was compacted):\n"
                            f"{completion.message.content}"),
        ]
        state.last_context_tokens = 0
        state.last_context_messages = 0
        self.journal.write(state)
