"""What a run starts around its tasks: the scripted model server of a live scripted run,
the folder of request slots that caps a live run's concurrent model requests, and the
foreign agent's image layers."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec

from endstate.agents import AgentSpec, agent_image
from endstate.cassettes import RunMode
from endstate.errors import UserError
from endstate.models import SCRIPTED_PROVIDERS, RequestLimits, parse_spec
from endstate.run._config import RunConfig
from endstate.task import Task, task_sandbox

__all__ = ["RATE_LIMIT_ENV", "agent_layers", "request_slots", "scripted_urls"]


@contextlib.contextmanager
def request_slots(config: RunConfig) -> Iterator[RequestLimits]:
    """The run's limits, with a folder for its slot locks if it has a ceiling (none on replay)."""
    import tempfile

    limits, off = config.limits, config.limits.max_concurrent is msgspec.UNSET or config.mode == RunMode.REPLAY
    with contextlib.nullcontext("") if off else tempfile.TemporaryDirectory(prefix="endstate-slots-") as folder:
        yield msgspec.structs.replace(limits, slots=folder)


#: N: a live scripted run's server answers every Nth request 429 with Retry-After: 1.
RATE_LIMIT_ENV = "ENDSTATE_SCRIPTED_RATE_LIMIT"


@contextlib.contextmanager
def scripted_urls(config: RunConfig, tasks: list[Task], suite_root: Path) -> Iterator[dict[str, str]]:
    """For scripted models: start the local server (live runs) and give each task its URL."""
    provider, policy = parse_spec(config.model)
    if provider not in SCRIPTED_PROVIDERS:
        yield {}
        return
    wire = "messages" if provider == "scripted-anthropic" else "chat"
    if config.mode == RunMode.REPLAY:
        # Nothing is served on replay; only the path takes part in the request hash.
        yield {t.id: f"http://127.0.0.1:9/scripted/{policy}/{t.id}{'' if wire == 'messages' else '/v1'}" for t in tasks}
        return
    from endstate.models import ScriptedServer

    every = int(os.environ.get(RATE_LIMIT_ENV, "0") or 0)
    with ScriptedServer(suite_root, rate_limit_every=every) as server:
        yield {t.id: server.base_url_for(policy, t.id, wire=wire) for t in tasks}


def agent_layers(agent: AgentSpec | None, backend: str, image: str, todo: list[tuple[Task, int]]) -> dict[str, str]:
    """Task image -> the foreign agent's layer over it (built offline, or found)."""
    if agent is None or not todo:
        return {}
    if backend != "docker":
        raise UserError(f"agent {agent.name} runs only in Docker sandboxes: pass --sandbox docker")
    bases = sorted({task_sandbox(task, backend, image).image for task, _ in todo})
    return {base: agent_image(agent, base, steps=_say) for base in bases}


def _say(line: str) -> None:
    """A step of an agent layer's first build, on stderr: it runs for minutes before any task starts."""
    print(f"endstate: {line}", file=sys.stderr, flush=True)
