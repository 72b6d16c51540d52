"""Installed coding agents (mini-swe-agent, ...) run in the sandbox, their model traffic
recorded and replayed at the HTTP boundary.

    find_agent(name) -> AgentSpec | None     `--agent NAME`: a shipped agent or an agent file
    agent_image(spec, base) -> tag           the task's image with the agent installed (offline)
    refusal(task, spec) -> str               why a task cannot run with that agent ("" when it can)
    mismatch(spec, model) -> str             why the agent cannot talk to that model at all (wire format)
    probe_proxy(agent, cassette, ...)        the mutation check's probe of the proxy's endpoint allowlist

The worker side (`_run.run_foreign_job`, one task's run in a worker process, and the model
proxy) is imported by the worker only: it needs the agent loop's job types.
"""

from endstate.agents._image import agent_image
from endstate.agents._probe import probe_proxy
from endstate.agents._refuse import mismatch, refusal
from endstate.agents._spec import DEFAULT_AGENT, OBSERVABLE_COUNTERS, AgentSpec, find_agent, load_agent

__all__ = ["AgentSpec", "find_agent", "load_agent", "agent_image", "refusal", "mismatch", "DEFAULT_AGENT",
           "OBSERVABLE_COUNTERS", "probe_proxy", "run_foreign_job"]


def __getattr__(name: str):
    if name != "run_foreign_job":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from endstate.agents._run import run_foreign_job

    return run_foreign_job
