"""What a run is asked to do (`RunConfig`) and what it records about itself (its `RunCard`).

The card is written before the first task starts; a resumed run must match it (and
`settings_key`, what the card does not hold) or it is refused.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from endstate import __version__
from endstate.agent import Guards
from endstate.agents import AgentSpec
from endstate.cassettes import RunMode
from endstate.grading import Grader
from endstate.models import RequestLimits, RunSettings
from endstate.run._faults import RetryPolicy
from endstate.run._results import RunCard
from endstate.run._resume import digest
from endstate.sandbox import DEFAULT_IMAGE
from endstate.task import Task, own_image_ids, recorded_adequacy, unguarded_of

__all__ = ["RunConfig", "model_slug", "task_pack_hash", "run_card", "settings_key"]


class RunConfig(msgspec.Struct, frozen=True):
    model: str
    settings: RunSettings = RunSettings()
    base_url: str | None = None
    sandbox: str = "auto"
    image: str = DEFAULT_IMAGE
    jobs: int = 1
    guards: Guards = Guards()
    mode: RunMode = RunMode.LIVE
    cassettes: str | None = None
    match: str = "strict"
    overwrite: bool = False
    policy_files: tuple[str, ...] = ()
    #: Runs per task, seeded seed .. seed + attempts - 1 (each with its own cassette).
    attempts: int = 1
    #: `--agent`: "" or "endstate" for endstate's own loop, else a shipped agent's name or an agent file.
    agent: str = ""
    #: How a task is run again when the machinery fails under it.
    infra: RetryPolicy = RetryPolicy()
    #: On --resume, keep infra and harness errors instead of running those tasks again.
    keep_errors: bool = False
    #: Give the agent each task with its visible tests made impossible (see `_impossible`).
    impossible: bool = False
    #: The ceiling on model requests in flight and the rate-limit waits (not part of what is requested).
    limits: RequestLimits = RequestLimits()
    #: A fork (record mode): the cassette folder whose turns before `fork_at` are served
    #: (-1: until its first divergence); see `_recordmode`.
    fork_from: str | None = None
    fork_at: int = -1
    #: `record --record-mode`: "" (record everything, refusing existing cassettes) or a RECORD_MODES name.
    record_mode: str = ""


def model_slug(spec: str) -> str:
    return spec.replace("/", "-").replace(":", "-")


def task_pack_hash(tasks: list[Task], images: dict[str, str] | None = None, agent: str = "") -> str:
    """sha256 over the tasks' contents and, for tasks with their own image, that image's id;
    and the foreign agent's id, if one runs them."""
    digest = hashlib.sha256()
    if agent:
        digest.update(f"agent:{agent}\n".encode())
    for task in sorted(tasks, key=lambda t: t.id):
        digest.update(f"{task.id}:{task.content_hash()}\n".encode())
        if images and task.id in images:
            digest.update(f"{task.id}:image:{images[task.id]}\n".encode())
    return digest.hexdigest()


def _network_policy(tasks: list[Task]) -> str:
    """"none", or which tasks' agents reached the network (a Harbor task's allow_internet): grading never does."""
    online = sorted(t.id for t in tasks if t.manifest.sandbox.network)
    return f"agent of {', '.join(online)}: bridge; grading: none" if online else "none"


def run_card(config: RunConfig, tasks: list[Task], backend: str, provider: str, graders: dict[str, list[Grader]],
             card_extra: dict[str, Any] | None = None, *, agent: AgentSpec | None = None) -> RunCard:
    """What the run records about itself before its first task: model, settings, sandbox, image, tasks, guards.
    Tasks with their own image have it built (or found) here."""
    probe = _describe_backend(backend, config)
    task_images = own_image_ids(tasks, backend, config.image)  # built (or found) before any task starts
    card = RunCard(
        endstate_version=__version__,
        model=config.model,
        provider=provider,
        temperature=config.settings.temperature,
        seed=config.settings.seed,
        retry_ceiling=config.settings.max_retries,
        tool_choice=config.settings.tool_choice,
        network_policy=_network_policy(tasks),
        sandbox_backend=backend,
        image=config.image if backend == "docker" else "",
        image_id=probe.get("image_id", ""),
        task_pack_hash=task_pack_hash(tasks, task_images, agent.id if agent else ""),
        task_images=task_images,
        tasks=len(tasks),
        mode=config.mode,
        replay_from=config.cassettes or "" if config.mode == RunMode.REPLAY else "",
        match=config.match if config.mode == RunMode.REPLAY else "",
        guards_disabled=tuple(name for name in Guards.__struct_fields__ if not getattr(config.guards, name)),
        attempts=config.attempts,
        graders={t.id: tuple(g.short_name for g in graders[t.id]) for t in tasks},
        agent=agent.id if agent else "endstate",
        infra_tries=config.infra.tries,
        impossible=config.impossible or msgspec.UNSET,
        thinking_budget=config.settings.thinking_budget,
        reasoning_effort=config.settings.reasoning_effort,
        prompt_cache=config.settings.prompt_cache,
        max_concurrent=config.limits.max_concurrent,
        adequacy=recorded_adequacy(tasks) or msgspec.UNSET,
        sandbox_why=_why_local(config.sandbox) if backend == "local" else msgspec.UNSET,
        fork_from=config.fork_from if config.fork_from is not None else msgspec.UNSET,
        fork_at=config.fork_at if config.fork_from is not None else msgspec.UNSET,
        record_mode=config.record_mode or msgspec.UNSET,
        agent_version=agent.version if agent else msgspec.UNSET,
        tasks_hash=task_pack_hash(tasks, task_images) if agent else msgspec.UNSET,
        unguarded={t.id: unguarded_of(t.manifest.graders) for t in tasks if unguarded_of(t.manifest.graders)}
        or msgspec.UNSET,
        **(card_extra or {}),
    )
    return card


def _why_local(asked: str) -> str:
    """Why a run is on bubblewrap, said on its card and under its table: it is not the boundary
    Docker is, and tasks that need an image cannot run there."""
    if asked == "local":
        return "asked for with --sandbox local"
    return "--sandbox auto found no Docker engine on this machine (DOCKER_HOST unset, no engine socket)"


def settings_key(config: RunConfig) -> dict[str, Any]:
    """Settings a resumed run must share that are not on the card."""
    return {
        "settings": msgspec.to_builtins(config.settings),
        "base_url": digest(config.base_url),
        "cassettes": config.cassettes or "",
        "policy_files": {path: digest(Path(path).read_bytes()) for path in config.policy_files},
        **({"agent": config.agent} if config.agent else {}),
    }


def _describe_backend(backend: str, config: RunConfig) -> dict[str, str]:
    if backend != "docker":
        return {}
    from endstate.sandbox import image_id

    return {"image_id": image_id(config.image, hint="run `endstate image build` first")}
