"""A run's parts checked against each other before any sandbox starts.

Each part is checked on its own where it is read (a spec, an agent file, a cassette); what
is left is the pairing: an installed agent and the wire format of its model, a run setting
and the provider that would send it, the sandbox backend and the programs the tasks run, a
record mode and the model its kept cassettes were recorded with. A pairing that cannot work
would otherwise start every sandbox and read, task after task, as the model's failure.
"""

from __future__ import annotations

import shlex
import shutil
from typing import Any

from endstate.errors import UserError

__all__ = ["check_model", "check_pairing", "LOCAL_PATH"]

#: The PATH a command has in the local (bubblewrap) sandbox, which sees the host's own programs
#: (the one sandbox/_local.py sets).
LOCAL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Settings endstate's loop sends and an installed agent never sees (it builds its own requests).
_LOOP_ONLY = {"thinking_budget": "--thinking-budget", "reasoning_effort": "--reasoning-effort",
              "prompt_cache": "--prompt-cache"}


def check_model(agent_name: str, model: str, settings: Any, explicit: set[str]) -> None:
    """UserError when the agent cannot talk to `model`, or a setting would do nothing with them.
    `explicit` holds the RunSettings fields the user set on the command line."""
    from endstate.agents import find_agent, mismatch
    from endstate.models import check_settings

    agent = find_agent(agent_name)
    problem = mismatch(agent, model)
    if problem:
        raise UserError(problem)
    unsent = sorted(explicit & _LOOP_ONLY.keys()) if agent is not None else []
    if unsent:
        raise UserError(f"{_LOOP_ONLY[unsent[0]]} reaches endstate's own loop only: --agent {agent.name} builds "
                        "its own requests, so it would do nothing: drop it")
    if agent is None:
        check_settings(model, settings)


def check_pairing(config: Any, tasks: list[Any]) -> None:
    """UserError, in one line naming the right choice, for parts of the run that cannot work
    together once the tasks are loaded and a replay or fork has named its model."""
    from endstate.agents import find_agent, mismatch

    problem = mismatch(find_agent(config.agent), config.model) if config.model else ""
    if problem:
        raise UserError(problem)
    if config.record_mode in ("once", "new_episodes"):
        _check_kept_recordings(config, tasks)
    if config.sandbox == "local":
        _check_local_programs(tasks)


def _check_kept_recordings(config: Any, tasks: list[Any]) -> None:
    """`once` replays a task's cassette and `new_episodes` keeps its matching turns: both as the
    run's own model and agent, so a cassette of another one would score its answers as theirs."""
    from endstate.agents import find_agent
    from endstate.cassettes import cassette_file, load
    from endstate.errors import CassetteError

    agent = find_agent(config.agent)
    mine = (config.model, agent.id if agent else "")
    for task in tasks:
        path = cassette_file(config.cassettes, task.id)
        try:
            header = load(path).header if path.is_file() else None
        except CassetteError:
            continue  # recorded again: a damaged cassette is not kept
        if header is not None and (header.model, header.agent) != mine:
            theirs = header.model + (f" through {header.agent.split('@')[0]}" if header.agent else "")
            raise UserError(f"--record-mode {config.record_mode} would keep {path}, recorded with {theirs}, as a "
                            f"recording of {config.model}{' through ' + agent.name if agent else ''}: pass the "
                            "--cassettes folder of this model and agent")


def _check_local_programs(tasks: list[Any]) -> None:
    """The local sandbox runs the host's own programs: each one a task's graders or reference
    trajectory starts must be on this host, or the known-fix arm would fail for want of it."""
    for task in tasks:
        for where, command in _commands(task):
            try:
                words = shlex.split(command)
            except ValueError:
                continue
            program = words[0] if words else ""
            if program and "/" not in program and "=" not in program and shutil.which(program, path=LOCAL_PATH) is None \
                    and not _builtin(program):
                raise UserError(f"--sandbox local runs this host's programs and there is no `{program}` in {LOCAL_PATH}"
                                f" (task {task.id}, {where}: `{command}`): install it (for python: apt-get install "
                                "python-is-python3) or use --sandbox docker")


def _builtin(word: str) -> bool:
    return word in {"cd", "echo", "export", "set", "test", "[", "true", "false", "exit", "printf", "unset", "source",
                    ".", "if", "for", "while", "!", "(", "{"}


def _commands(task: Any) -> list[tuple[str, str]]:
    """(where, command) of each shell command a task's graders and reference trajectory start."""
    found = []
    for grader in task.manifest.graders:
        command = grader.args.get("command")
        if isinstance(command, str):
            found.append((f"grader {grader.name}", command))
    if task.has_trajectory("reference"):
        for number, step in enumerate(task.reference().steps):
            for call in step.calls:
                command = call.args.get("command")
                if call.tool == "bash" and isinstance(command, str):
                    found.append((f"reference step {number}", command))
    return found
