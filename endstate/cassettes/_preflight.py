"""A replay folder checked before anything runs, and what replay takes from it.

    source = check_replay_folder("cassettes/x", {"task-id": task_hash, ...}, model=None, match="strict")
    source.model, source.settings, source.problems

Every cassette of the tasks to replay is opened and decoded whole, and its
header checked: recorded for this task, with the same model as the others, of
the same task (strict matching). What is wrong with one task's cassette is a
CassetteError for that task alone, in `problems`, so the caller can skip it
before any container starts; what makes the whole replay ambiguous (cassettes
of several models, or recorded with different settings) is raised.

The model and the run settings come from the headers; an option the user gave
explicitly must agree with them (`replay_settings`). Format 1 cassettes did not
record settings: for them the options are used, as they always were.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from endstate.cassettes._format import INCOMPLETE, Header, Recording, load
from endstate.errors import CassetteError
from endstate.models import RunSettings
from endstate.task import files_hash, held_out_changes, variant_hash

__all__ = ["ReplaySource", "SETTING_OPTIONS", "changed_files", "check_replay_folder", "open_cassette", "check_header",
           "held_out_only", "replay_settings"]

#: The command-line option of each recorded run setting, for messages.
SETTING_OPTIONS: dict[str, str] = {
    "temperature": "--temperature",
    "seed": "--seed",
    "max_retries": "--retries",
    "timeout_s": "--request-timeout",
    "tool_choice": "--tool-choice",
    "max_output_tokens": "--max-output-tokens",
    "thinking_budget": "--thinking-budget",
    "reasoning_effort": "--reasoning-effort",
    "prompt_cache": "--prompt-cache",
}


class ReplaySource(msgspec.Struct):
    folder: str
    #: The model every usable cassette was recorded with; None when none is usable.
    model: str | None
    #: The settings they were recorded with; None when they predate recorded settings.
    settings: RunSettings | None
    #: Task ids whose cassettes passed every check, sorted.
    usable: list[str]
    #: Task id -> what is wrong with its cassette (the message names the file).
    problems: dict[str, CassetteError]

    @property
    def settings_from(self) -> str:
        return f"the cassettes in {self.folder}"


def open_cassette(path: Path, task_id: str, model: str | None = None, agent: str | None = None) -> Recording:
    """Load one task's cassette, saying precisely why it cannot be (missing, a directory, damaged).
    `agent` (an agent id) goes into the command that would record a missing one."""
    if path.is_dir():
        raise CassetteError(f"{path} is a directory, not a cassette file: remove it, or point --replay at the "
                            f"folder that holds {path.name}")
    if not path.exists():
        command = f"endstate record --agent {agent.split('@')[0]}" if agent else "endstate record"
        raise CassetteError(
            f"no cassette for task {task_id} at {path}: record it with `{command} --model "
            f"{model or '<provider/model>'}` or pass the right --replay folder"
        )
    return load(path)


def check_header(recording: Recording, expected: Mapping[str, Any], task_id: str, *, strict: bool,
                 verb: str) -> list[str]:
    """Refuse a cassette for another task or model, an incomplete one (replay), or (strict) a changed
    task; return notes.

    `expected` holds what this run has (any of model, task_hash, image_id,
    endstate_version, agent); a key that is missing or empty is not checked, except the agent
    (empty: endstate's own loop): a foreign agent's cassette replays only with that agent.
    """
    header, path = recording.header, recording.path
    notes: list[str] = []
    if verb == "replay" and not recording.complete:  # its missing turns would only show as a divergence later
        raise CassetteError(f"cannot replay: cassette {path} is {INCOMPLETE}: `endstate record --resume` "
                            "(same --out and --cassettes) re-records it")
    if header.task_id != task_id:
        raise CassetteError(f"cannot {verb}: cassette {path} was recorded for task {header.task_id}, not {task_id}")
    model = expected.get("model")
    if model and header.model != model:
        raise CassetteError(
            f"cannot {verb}: cassette {path} was recorded with model {header.model}, this run uses {model}: "
            f"pass the --replay folder of {model}'s cassettes, or record them"
        )
    agent = str(expected.get("agent") or "")
    if "agent" in expected and header.agent != agent:
        recorded, running = header.agent or "endstate", agent or "endstate"
        raise CassetteError(
            f"cannot {verb}: cassette {path} was recorded with agent {recorded}, this run uses {running}: "
            f"pass --agent {recorded.split('@')[0]} (the same agent file), or record again"
        )
    task_hash = expected.get("task_hash")
    held_out = held_out_only(header, str(task_hash or ""), expected.get("task_files")) if verb == "replay" else []
    if held_out:
        notes.append(f"task {task_id} changed since it was recorded only in held-out files ({_listed(held_out)}): "
                     "the agent saw the same task; the verdict is today's tests'")
    elif task_hash and header.task_hash != task_hash:
        if strict:
            now = expected.get("task_files")
            files = changed_files(header.task_files, now) if now else ""  # "" for recordings older than the list
            raise CassetteError(
                f"cannot {verb}: task {task_id} changed since cassette {path} was recorded ("
                f"{files + '; ' if files else ''}task hash "
                f"{header.task_hash[:12]} then, {str(task_hash)[:12]} now): re-record it with `endstate record`, "
                "or replay with --match sequence"
            )
        notes.append(f"task {task_id} changed since it was recorded (task hash {header.task_hash[:12]} then, "
                     f"{str(task_hash)[:12]} now); sequence matching ignores request bodies")
    image_id = expected.get("image_id")
    if image_id and header.image_id and header.image_id != image_id:
        notes.append(f"recorded on sandbox image {header.image_id[:19]}, running on {str(image_id)[:19]}")
    version = expected.get("endstate_version")
    if version and header.endstate_version != version:
        notes.append(f"recorded by endstate {header.endstate_version}, replayed by {version}")
    return notes


def held_out_only(header: Header, task_hash: str, now: Mapping[str, str] | None) -> list[str]:
    """The held-out files (holdout/) that alone differ between the task a cassette was recorded
    with and today's, which hashes to `task_hash` with the files `now`; [] when the hashes agree,
    or when anything else differs or cannot be told.

    The recorded file list is trusted only if it hashes to the recorded task hash, in the variant
    (the task or its impossible twin) that today's files hash to `task_hash` in.
    """
    if not task_hash or header.task_hash == task_hash or not header.task_files or not now:
        return []
    variants = [impossible for impossible in (False, True) if variant_hash(files_hash(now), impossible) == task_hash]
    if not variants or variant_hash(files_hash(header.task_files), variants[0]) != header.task_hash:
        return []
    return held_out_changes(header.task_files, now) or []


def _listed(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def changed_files(recorded: Mapping[str, str], now: Mapping[str, str]) -> str:
    """Which task files differ from those a cassette was recorded with, in words ("" if none
    differs, or the recording is older than per-file hashes)."""
    if not recorded:
        return ""
    parts = [(what, sorted(names)) for what, names in (
        ("changed", [n for n in recorded.keys() & now.keys() if recorded[n] != now[n]]),
        ("added", now.keys() - recorded.keys()), ("removed", recorded.keys() - now.keys())) if names]
    return "; ".join(f"{what}: {_listed(names)}" for what, names in parts)


def check_replay_folder(folder: str | Path, tasks: Mapping[str, str], *, model: str | None,
                        match: str, agent: str | None = None,
                        task_files: Mapping[str, Mapping[str, str]] | None = None) -> ReplaySource:
    """Open and check the cassette of every task in `tasks` (task id -> task hash); `task_files`
    (task id -> path -> sha256) lets a refusal of a changed task name the files that changed.

    `model` is the one the user asked for, if any. Raises CassetteError when the
    folder is missing, when the cassettes name several models and `model` does
    not choose, when `model` is none of theirs, or when they were recorded with
    different settings. `agent` (an agent id, "" for endstate's loop), when given, must be
    the one each cassette was recorded with.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CassetteError(f"replay folder {folder} {'is not a folder' if folder.exists() else 'does not exist'}: "
                            "pass the folder `endstate record --cassettes` wrote")
    problems: dict[str, CassetteError] = {}
    loaded: dict[str, Recording] = {}
    for task_id in sorted(tasks):
        try:
            recording = open_cassette(folder / f"{task_id}.cassette", task_id, model, agent)
            check_header(recording, {}, task_id, strict=True, verb="replay")
            loaded[task_id] = recording
        except CassetteError as exc:
            problems[task_id] = exc
    chosen = _the_model(folder, loaded, model)
    for task_id, recording in list(loaded.items()):
        try:
            expected = {"model": chosen, "task_hash": tasks[task_id], "task_files": (task_files or {}).get(task_id),
                        **({} if agent is None else {"agent": agent})}
            check_header(recording, expected, task_id,
                         strict=match == "strict", verb="replay")
        except CassetteError as exc:
            problems[task_id] = exc
            del loaded[task_id]
    return ReplaySource(str(folder), chosen, _the_settings(loaded), sorted(loaded), problems)


def _the_model(folder: Path, loaded: Mapping[str, Recording], asked: str | None) -> str | None:
    by_model = collections.defaultdict(list)
    for task_id, recording in loaded.items():
        by_model[recording.header.model].append(f"{task_id}.cassette")
    if asked is not None:
        if by_model and asked not in by_model:
            raise CassetteError(f"--model {asked} contradicts the cassettes in {folder}, recorded with "
                                f"{' and '.join(sorted(by_model))}: drop --model (replay takes it from the "
                                "cassettes), or pass the folder of that model's cassettes")
        return asked
    if len(by_model) > 1:
        listed = "; ".join(f"{name} ({len(files)}: {', '.join(files[:3])}{', ...' if len(files) > 3 else ''})"
                           for name, files in sorted(by_model.items()))
        raise CassetteError(f"the cassettes in {folder} were recorded with {len(by_model)} models: {listed}: "
                            "pass --model to replay one of them")
    return next(iter(by_model), None)


def _the_settings(loaded: Mapping[str, Recording]) -> RunSettings | None:
    recorded = {task_id: r.header.settings for task_id, r in loaded.items() if r.header.settings is not None}
    if not recorded:
        return None
    first_id, first = next(iter(recorded.items()))
    for task_id, settings in recorded.items():
        if settings != first:
            field, one, other = _first_difference(first, settings)
            raise CassetteError(
                f"cassettes {loaded[first_id].path} and {loaded[task_id].path} were recorded with different "
                f"settings ({field} {one} and {other}): replay them separately with --task"
            )
    return first


def _first_difference(a: RunSettings, b: RunSettings) -> tuple[str, Any, Any]:
    for field in a.__struct_fields__:
        if getattr(a, field) != getattr(b, field):
            return field, getattr(a, field), getattr(b, field)
    return "", None, None


def replay_settings(source: ReplaySource, given: RunSettings, explicit: set[str]) -> RunSettings:
    """The settings to replay with: the recorded ones, or `given` for cassettes that did
    not record them. Raises CassetteError naming the option when an explicit one
    (a RunSettings field name in `explicit`) contradicts the recording."""
    recorded = source.settings
    if recorded is None:
        return given
    for field in sorted(explicit):
        mine, theirs = getattr(given, field), getattr(recorded, field)
        if mine != theirs:
            option = SETTING_OPTIONS.get(field, field)
            raise CassetteError(
                f"{option} {mine} contradicts {source.settings_from}, recorded with {field} {theirs}: "
                f"drop {option} (replay takes it from the cassettes)"
            )
    return recorded
