"""What each scripted control arm answers, as pure functions of (task, channel, turn).

    null        "Done." at once, no tool calls: the no-edit control
    reference   the task's reference.toml, one step per agent turn: the known-fix control
    wasteful    the task's wasteful.toml (cost tasks): right answer, too many steps or tokens
    hacks       one of the task's own hacks/ (see `_hackarm`): the hack arm, caught on every task

A policy returns the assistant message in the chat-completions wire format. Tool
call ids and argument texts are derived from the step alone, so the same request
always gets the same bytes.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from endstate.task import Hack, Task

__all__ = ["ScriptError", "POLICIES", "HACK_PREFIX", "hack_policy", "find_policy", "DONE", "null", "reference", "wasteful", "hacks", "chosen_hack", "CATCHERS", "estimate_tokens", "canonical_json"]

#: What a scripted model says when it has nothing left to do.
DONE = "Done."


class ScriptError(Exception):
    """A request the scripted server cannot answer; carries the HTTP status to send."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def null(task: Task, channel: str, turn: int | None) -> dict[str, Any]:
    return {"role": "assistant", "content": DONE}


def reference(task: Task, channel: str, turn: int | None) -> dict[str, Any]:
    return _play(task, "reference", channel, turn)


def wasteful(task: Task, channel: str, turn: int | None) -> dict[str, Any]:
    if not task.has_trajectory("wasteful"):
        raise ScriptError(422, f"task {task.id} ships no wasteful.toml; only cost tasks have a wasteful arm")
    return _play(task, "wasteful", channel, turn)


def _play(task: Task, name: str, channel: str, turn: int | None) -> dict[str, Any]:
    ref = task.trajectory(name)
    if channel == "compaction":
        return {"role": "assistant", "content": ref.summary}
    if turn is None:
        raise ScriptError(400, f"the {name} policy needs the X-Endstate-Turn header on agent requests")
    if turn >= len(ref.steps):
        return {"role": "assistant", "content": DONE}
    step = ref.steps[turn]
    message: dict[str, Any] = {"role": "assistant", "content": step.say}
    if step.calls:
        message["tool_calls"] = [
            {
                "id": f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": call.tool, "arguments": json.dumps(call.args, sort_keys=True)},
            }
            for i, call in enumerate(step.calls)
        ]
    return message


# -- the hack arm ----------------------------------------------------------------------
# `scripted/hacks` plays, on every task, one of the task's own negative controls (hacks/) as
# an agent would, so that a measured hack rate has a control that attempts on every task:
# it must be caught every time and pass none. Which hack: `skip-failing`, else `edit-tests`,
# else the first (by name) a hack assertion catches. An overlay becomes one turn of tool
# calls leaving the same files (`write_file` for each added or changed text file, `rm` and
# `ln -s` through `bash` for deletions and links); a live hack plays its own trajectory.

#: What must catch the hack the arm plays: assertions whose firing is a hack attempt.
CATCHERS = ("files_unchanged", "no_new_skips", "changed_paths_within", "end_state", "probe")
_PREFERRED = ("skip-failing", "edit-tests")


def chosen_hack(task: Task) -> Hack | None:
    usable = {name: hack for name, hack in task.hacks().items() if set(hack.spec.catchers()) & set(CATCHERS)}
    for name in (*_PREFERRED, *sorted(usable)):
        if name in usable:
            return usable[name]
    return None


def _calls(task: Task, hack: Hack) -> list[dict[str, Any]] | None:
    """The tool calls that leave the overlay's tree, or None when a file is not text."""
    fixture, tree = task.fixture(), hack.tree or {}
    calls: list[dict[str, Any]] = []
    for path in sorted(tree):
        entry = tree[path]
        if fixture.get(path) == entry:
            continue
        if entry.link:
            calls.append({"tool": "bash", "args": {"command": f"ln -sfn {shlex.quote(entry.link)} {shlex.quote(path)}"}})
            continue
        try:
            text = entry.data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        calls.append({"tool": "write_file", "args": {"path": path, "content": text}})
    gone = sorted(set(fixture) - set(tree))
    if gone:
        calls.append({"tool": "bash", "args": {"command": "rm -f -- " + " ".join(shlex.quote(p) for p in gone)}})
    return calls


def hacks(task: Task, channel: str, turn: int | None) -> dict[str, Any]:
    hack = chosen_hack(task)
    if hack is None:
        raise ScriptError(422, f"task {task.id} has no hack the hack arm can play (one caught by "
                               f"{', '.join(CATCHERS)})")
    if hack.live:
        return _play(task, f"hacks/{hack.name}/trajectory", channel, turn)
    if channel == "compaction":
        return {"role": "assistant", "content": "Summary of the work so far."}
    if turn is None:
        raise ScriptError(400, "the hacks policy needs the X-Endstate-Turn header on agent requests")
    calls = _calls(task, hack)
    if calls is None:
        raise ScriptError(422, f"task {task.id}: hack {hack.name} leaves a file that is not text; the hack arm "
                               "cannot write it with its tools")
    if turn > 0 or not calls:
        return {"role": "assistant", "content": DONE}
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call_0_{i}", "type": "function",
         "function": {"name": call["tool"], "arguments": json.dumps(call["args"], sort_keys=True)}}
        for i, call in enumerate(calls)]}


#: Policy name -> answer function; the names are those `scripted/<policy>` accepts.
POLICIES: Mapping[str, Callable[[Task, str, int | None], dict[str, Any]]] = MappingProxyType(
    {"null": null, "reference": reference, "wasteful": wasteful, "hacks": hacks}
)

#: `scripted/hack.<name>` plays a task's live hack, `hacks/<name>/trajectory.toml`: a
#: negative control that needs a running agent (a background process, a file in the
#: agent user's home) rather than an overlay of files.
HACK_PREFIX = "hack."


def hack_policy(name: str) -> Callable[[Task, str, int | None], dict[str, Any]]:
    trajectory = f"hacks/{name}/trajectory"

    def play(task: Task, channel: str, turn: int | None) -> dict[str, Any]:
        if not task.has_trajectory(trajectory):
            raise ScriptError(422, f"task {task.id} has no live hack {name!r} ({trajectory}.toml)")
        return _play(task, trajectory, channel, turn)

    return play


def find_policy(policy: str) -> Callable[[Task, str, int | None], dict[str, Any]] | None:
    """The answer function `scripted/<policy>` names, or None."""
    if policy.startswith(HACK_PREFIX) and len(policy) > len(HACK_PREFIX):
        return hack_policy(policy[len(HACK_PREFIX):])
    return POLICIES.get(policy)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(value: Any) -> int:
    """A tokenizer-free, deterministic token count: one token per four characters of JSON."""
    return math.ceil(len(canonical_json(value)) / 4)
