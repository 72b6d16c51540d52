"""Preparing a replay: its inputs checked, its model and settings taken from the cassettes."""

from __future__ import annotations

from pathlib import Path

import msgspec

from endstate.agents import find_agent, refusal
from endstate.cassettes import CassetteJob, RunMode, check_replay_folder, load, replay_settings
from endstate.errors import CassetteError
from endstate.models import settings_for
from endstate.run._config import RunConfig
from endstate.task import Task, run_task_hash

__all__ = ["prepare_fork", "prepare_replay", "replay_base_url"]


def _other_mode(problem: CassetteError, task: Task, impossible: bool) -> CassetteError:
    """A cassette of the task recorded in the other mode (with or without --impossible) says so."""
    other = run_task_hash(task, not impossible)[:12]
    if f"task hash {other} then" not in str(problem):
        return problem
    return CassetteError(f"{problem}; it was recorded {'without' if impossible else 'with'} --impossible: "
                         f"{'drop' if impossible else 'pass'} --impossible to replay it")


def prepare_replay(tasks: list[Task], config: RunConfig,
                   explicit: set[str] = frozenset()) -> tuple[list[Task], RunConfig, list[CassetteError]]:
    """The tasks whose cassettes are usable, the config to replay them with, and what is
    wrong with each other task's cassette; all found before any sandbox starts.

    `config.model` (empty: not given) and the settings named in `explicit`
    (RunSettings field names the user set) must agree with the cassettes; the
    rest comes from them. Raises CassetteError when the replay as a whole cannot
    be made sense of (see check_replay_folder and replay_settings).
    """
    if config.mode != RunMode.REPLAY or config.cassettes is None:
        raise ValueError("prepare_replay needs a replay config with a cassette folder")
    agent = find_agent(config.agent)
    refused = {t.id for t in tasks if refusal(t, agent)}  # no cassette to check: the run refuses them by name
    checked = [t for t in tasks if t.id not in refused]
    source = check_replay_folder(config.cassettes, {t.id: run_task_hash(t, config.impossible) for t in checked},
                                 model=config.model or None, match=config.match, agent=agent.id if agent else "",
                                 task_files={t.id: t.file_hashes() for t in checked})
    problems = [_other_mode(source.problems[t.id], t, config.impossible) for t in tasks if t.id in source.problems]
    usable = [t for t in tasks if t.id in set(source.usable) or t.id in refused]
    if source.model is None:
        if not config.model:  # no recording to name the model: nothing runs, and the refused are told why
            return [], config, problems + [CassetteError(refusal(t, agent)) for t in tasks if t.id in refused]
        return usable, config, problems
    settings = replay_settings(source, config.settings, set(explicit))
    return usable, msgspec.structs.replace(config, model=source.model, settings=settings), problems


#: The endpoint each wire format posts to, after the base URL's path (the anthropic SDK, and an
#: agent speaking the Messages API, put /v1 there themselves).
_ENDPOINTS = ("/chat/completions", "/v1/messages", "/responses")


def replay_base_url(cassette: CassetteJob | None) -> str | None:
    """On replay no server is needed: a stand-in URL with the recorded path prefix will do,
    since only the path takes part in the request hash (for any of the wire formats). So a
    recording made through `--base-url` (a gateway, a proxy) replays without it."""
    if cassette is None or cassette.mode != RunMode.REPLAY:
        return None
    try:
        recording = load(cassette.path)
    except CassetteError:
        return None  # the session reports what is wrong with the file
    for interaction in recording.interactions:
        for endpoint in _ENDPOINTS:
            prefix, sep, _ = interaction.request.path.rpartition(endpoint)
            if sep:
                return f"http://127.0.0.1:9{prefix}"
    return None
def prepare_fork(tasks: list[Task], config: RunConfig,
                 explicit: set[str] = frozenset()) -> tuple[list[Task], RunConfig, list[CassetteError]]:
    """The tasks that have a parent cassette to fork, the config to fork them with, and a
    problem for each other task. Settings the user did not set come from the parents, so the
    replayed turns are asked as they were recorded."""
    if config.fork_from is None:
        raise ValueError("prepare_fork needs a fork config")
    folder = Path(config.fork_from)
    agent = find_agent(config.agent)
    source = check_replay_folder(folder, {t.id: run_task_hash(t, config.impossible) for t in tasks},
                                 model=None, match="sequence", agent=agent.id if agent else "")
    problems = [CassetteError(f"cannot fork task {t.id}: {source.problems[t.id]}") for t in tasks
                if t.id in source.problems]
    usable = [t for t in tasks if t.id not in source.problems]
    if source.settings is None:
        return usable, config, problems
    mine = {field: getattr(config.settings, field) for field in explicit}
    # Across providers, the parent's settings the new one never sends are left behind.
    settings = settings_for(config.model, msgspec.structs.replace(source.settings, **mine))
    return usable, msgspec.structs.replace(config, settings=settings), problems
