"""A run's parts checked against each other before any sandbox starts.

Each part is checked on its own where it is read (a spec, an agent file, a cassette); what
is left is the pairing: an installed agent and the wire format of its model, a run setting
and the provider that would send it, the sandbox backend and the programs the tasks run, a
record mode and the model its kept cassettes were recorded with. A pairing that cannot work
would otherwise start every sandbox and read, task after task, as the model's failure.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from endstate.errors import UserError

__all__ = ["check_model", "check_pairing", "check_replay_covers", "attempts_left_out", "LOCAL_PATH"]

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
    if config.model and config.mode != "replay":
        _check_scripted_trajectories(config.model, tasks)
    if config.sandbox == "local":
        _check_local_programs(tasks, "--sandbox local runs this host's programs", "use --sandbox docker")
    elif config.sandbox == "auto" and _no_engine_here():
        _check_local_programs(tasks, "--sandbox auto found no Docker engine on this machine and would run this "
                              "host's programs", "start a Docker engine")


def _check_scripted_trajectories(model: str, tasks: list[Any]) -> None:
    """A scripted arm that plays a trajectory some tasks lack (wasteful.toml, a live hack's
    trajectory.toml) would start their sandboxes only to end each in a model error."""
    from endstate.models import SCRIPTED_PROVIDERS, parse_spec

    provider, policy = parse_spec(model)
    if provider not in SCRIPTED_PROVIDERS or (policy != "wasteful" and not policy.startswith("hack.")):
        return
    name = "wasteful" if policy == "wasteful" else f"hacks/{policy.removeprefix('hack.')}/trajectory"
    lacking = [t.id for t in tasks if not t.has_trajectory(name)]
    if lacking:
        having = [t.id for t in tasks if t.has_trajectory(name)]
        which = f": pass --task for those that do ({', '.join(having[:3])}{', ...' if len(having) > 3 else ''})" \
            if having else ""
        raise UserError(f"{model} plays each task's {name}.toml, which {len(lacking)} of the {len(tasks)} task(s) "
                        f"lack ({', '.join(lacking[:3])}{', ...' if len(lacking) > 3 else ''}){which}")


def check_replay_covers(folder: Path, suite: Path, tasks: list[Any]) -> None:
    """UserError, in one line, when the replay folder holds a cassette of none of the tasks (the
    folder of another suite, or an empty one): a line per task would say the same thing over."""
    from endstate.cassettes import cassette_file, cassettes_in

    if len(tasks) < 2 or not folder.is_dir() or any(cassette_file(folder, t.id).exists() for t in tasks):
        return
    others = [path.name for path in cassettes_in(folder)]
    held = f"; it holds {len(others)} of other tasks, e.g. {others[0]}" if others else ""
    raise UserError(f"{folder} holds a cassette of none of the {len(tasks)} task(s) of {suite} (e.g. "
                    f"{cassette_file(folder, tasks[0].id)}){held}: pass the --replay folder recorded on this "
                    f"suite, or record one with `endstate record --suite {suite} --model <provider/model>`")


def attempts_left_out(folder: Path, tasks: list[Any], attempts: int) -> str:
    """A note where the replay folder holds later attempts of the tasks (from a recording with
    --attempts) than `attempts` replays, or "": the run would score fewer attempts than were
    recorded, unsaid."""
    from endstate.cassettes import cassette_file
    from endstate.run import attempt_stem

    recorded: dict[str, int] = {}  # task id -> attempts its cassettes hold, where more than replayed
    for task in tasks:
        held = attempts
        while cassette_file(folder, attempt_stem(task.id, held)).is_file():
            held += 1
        if held > attempts:
            recorded[task.id] = held
    if not recorded:
        return ""
    most, example = max(recorded.values()), cassette_file(folder, attempt_stem(min(recorded), attempts)).name
    return (f"{folder} holds up to {most} attempts of {len(recorded)} task(s) (e.g. {example}), and --attempts "
            f"{attempts} replays the first {attempts}: pass --attempts {most} to replay every one")


def _no_engine_here() -> bool:
    """Whether `--sandbox auto` falls back to the local sandbox: nothing says this machine has a
    Docker engine (resolve_backend's rule; a configured engine that does not answer is its error)."""
    from endstate.sandbox import engine_configured

    return engine_configured() is None


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


def _check_local_programs(tasks: list[Any], runs_here: str, instead: str) -> None:
    """The local sandbox runs the host's own programs: bubblewrap around every command, bash for
    each, this host's python3 for the grading harness (with the test runner a task's tests name),
    and each program a task's commands start. One missing would fail the known-fix arm for the
    machinery's reason, scored as the model's FAIL."""
    if shutil.which("bwrap") is None:
        raise UserError(f"{runs_here} inside bubblewrap, which is not installed: apt-get install bubblewrap, "
                        f"or {instead}")
    imports: dict[str, bool] = {}
    for task in tasks:
        for where, command, name, is_module in [("every command", "bash -c COMMAND", "bash", False), *_needs(task)]:
            said = f"(task {task.id}, {where}: `{command}`): {_FIXES.get(name, f'install {name}')}, or {instead}"
            if not is_module and shutil.which(name, path=LOCAL_PATH) is None:
                raise UserError(f"{runs_here} and there is no `{name}` in {LOCAL_PATH} {said}")
            if is_module and name not in imports:
                imports[name] = _imports(name)
            if is_module and not imports[name]:
                raise UserError(f"{runs_here}, and this host's python3, which runs the tests, cannot import {name} {said}")


#: How a Debian host gets a program or module the tasks need.
_FIXES = {"python": "apt-get install python-is-python3", "python3": "apt-get install python3",
          "pytest": "apt-get install python3-pytest", "bash": "apt-get install bash", "git": "apt-get install git"}


def _needs(task: Any) -> list[tuple[str, str, str, bool]]:
    """(where, command, name, is a module) for what a task's commands need of this host: a test
    command, python3 and its test runner (the grading harness runs them, whatever the command
    calls its Python); a shell line, every program it starts (wrappers such as sudo included)."""
    from endstate.agent import extract_commands
    from endstate.grading import TestCommandError, parse_test_command

    found = []
    for where, command in _commands(task):
        if where.startswith("grader"):
            try:
                runner = parse_test_command(command)[0]
                found += [(where, command, "python3", False), (where, command, runner, True)]
                continue
            except TestCommandError:
                pass  # a shell line of its own, read as one below
        try:
            commands = extract_commands(command, "/workspace")
        except Exception:  # NestingTooDeep, RecursionError: a line too deep to read is left to the run
            continue
        found += [(where, command, program, False) for simple in commands for program in (*simple.via, simple.program)
                  if program and "/" not in simple.argv[0] and not _builtin(program)]
    return found


def _imports(module: str) -> bool:
    """Whether this host's python3 imports `module` as the harness starts it (no user site folder)."""
    python = shutil.which("python3", path=LOCAL_PATH)
    ran = subprocess.run([python or "python3", "-s", "-c", f"import {module}"], env={"PATH": LOCAL_PATH},
                         capture_output=True, check=False)
    return ran.returncode == 0


def _builtin(word: str) -> bool:
    return word in {"cd", "echo", "export", "set", "test", "[", "[[", "true", "false", "exit", "printf", "unset",
                    "source", ".", ":", "if", "for", "while", "!", "(", "{", "pwd", "read", "shift", "trap", "wait",
                    "umask", "ulimit", "type", "hash", "local", "return"}


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
