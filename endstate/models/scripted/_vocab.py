"""The control arms in a foreign agent's own tool vocabulary: Claude Code's and Codex's.

A request names the tools its agent offers, so the server can tell who is asking:

    claude-code   Messages API, tools Bash, Read, Write, Edit (and more)
    codex         Responses API, tool exec_command (Codex's shell; `shell` in older releases)
    opencode      Chat Completions, tools bash, read, write, edit (and more)

The trajectory a policy plays is flattened to one call a turn (as for a text-action
agent, `_bashblock`) and each call written as that agent's own tool call:

    claude-code   bash -> Bash, read_file -> Read, write_file -> Write, edit_file -> Edit,
                  with absolute paths below the working directory; Claude Code edits or
                  overwrites only a file it has read, so a Read comes first where needed;
                  a command first drops Claude Code's grep and find (see _UNSHADOW)
    codex         every call -> exec_command running the call's shell form (`as_command`)
    opencode      every call -> bash running the call's shell form

After the last call comes the final answer, "Done." with no tool call, on which the agent
ends; the null arm gives it at once. Every answer is a function of (policy, task, turn,
the request's tool names and working directory): no clock, no randomness.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from endstate.models.scripted._bashblock import as_command, flat_calls
from endstate.models.scripted._policies import DONE, canonical_json

__all__ = ["agent_vocabulary", "native_answer", "native_calls", "VOCABULARIES"]

#: The tools whose presence in a request names the agent, per wire format.
VOCABULARIES = {
    "claude-code": ("messages", frozenset({"Bash", "Read", "Write", "Edit"})),
    "codex": ("responses", frozenset({"exec_command"})),
    "codex-shell": ("responses", frozenset({"shell"})),
    "opencode": ("chat", frozenset({"bash", "read", "write", "edit"})),
}
#: Codex waits this long for a command before answering with a session to poll (its maximum).
_CODEX_YIELD_MS = 30000
#: Claude Code's shell shadows grep and find with functions running its own multi-threaded
#: ugrep and bfs, whose output order varies from run to run (grep over several files); the
#: control arm's commands use the system's, so that a recording replays.
_UNSHADOW = "unset -f grep find 2>/dev/null; "
_WORKDIR = re.compile(r"Working directory: (/[^\s\\\"<]*)")


def agent_vocabulary(request: dict[str, Any], wire: str) -> str | None:
    """Which agent's tools the request offers, or None (endstate's own loop, an SDK)."""
    tools = request.get("tools")
    if not isinstance(tools, list):
        return None
    # A Chat Completions tool names itself inside `function`; the other formats at the top.
    names = {str(t.get("name") or (t.get("function") or {}).get("name")) for t in tools if isinstance(t, dict)}
    for name, (its_wire, needed) in VOCABULARIES.items():
        if wire == its_wire and needed <= names:
            return name
    return None


def _workdir(request: dict[str, Any]) -> str:
    found = _WORKDIR.search(canonical_json(request.get("system", "")))
    return found.group(1).rstrip("/") if found else "/workspace"


def _absolute(workdir: str, path: str) -> str:
    return path if path.startswith("/") else f"{workdir}/{path.removeprefix('./')}"


def _claude_calls(calls: list[tuple[str, dict[str, Any]]], workdir: str) -> list[tuple[str, dict[str, Any]]]:
    native: list[tuple[str, dict[str, Any]]] = []
    known: set[str] = set()  # files Claude Code has read or written since the last shell command
    for tool, args in calls:
        if tool == "bash":
            native.append(("Bash", {"command": _UNSHADOW + str(args["command"]), "description": "Run a command"}))
            known.clear()  # a command may have changed any file: read again before editing
            continue
        path = _absolute(workdir, str(args["path"]))
        if tool == "read_file":
            native.append(("Read", {"file_path": path}))
        elif tool == "write_file":
            if path not in known:  # harmless for a new file: Read says it does not exist
                native.append(("Read", {"file_path": path}))
            native.append(("Write", {"file_path": path, "content": str(args["content"])}))
        elif tool == "edit_file":
            if path not in known:
                native.append(("Read", {"file_path": path}))
            native.append(("Edit", {"file_path": path, "old_string": str(args["old"]),
                                    "new_string": str(args["new"]), "replace_all": False}))
        else:
            raise ValueError(f"no Claude Code form for tool {tool!r}")
        known.add(path)
    return native


def native_calls(vocabulary: str, calls: list[tuple[str, dict[str, Any]]],
                 request: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """endstate's tool calls as the named agent's own, one a turn."""
    if vocabulary == "claude-code":
        return _claude_calls(calls, _workdir(request))
    if vocabulary == "codex":
        return [("exec_command", {"cmd": as_command(t, a), "yield_time_ms": _CODEX_YIELD_MS}) for t, a in calls]
    if vocabulary == "opencode":
        return [("bash", {"command": as_command(t, a), "description": "Run a command"}) for t, a in calls]
    if vocabulary == "codex-shell":
        return [("shell", {"command": ["bash", "-lc", as_command(t, a)]}) for t, a in calls]
    raise ValueError(f"unknown agent vocabulary {vocabulary!r}")


def native_answer(play: Callable[[Any, str, int | None], dict[str, Any]], task: Any, turn: int,
                  vocabulary: str, request: dict[str, Any]) -> dict[str, Any]:
    """The assistant message (chat-completions form) for `turn` of `play`, in the agent's tools."""
    calls = native_calls(vocabulary, flat_calls(play, task), request)
    if turn >= len(calls):
        return {"role": "assistant", "content": DONE}
    tool, args = calls[turn]
    return {"role": "assistant", "content": f"Step {turn + 1} of {len(calls)}: {tool}.",
            "tool_calls": [{"id": f"call_{turn}", "type": "function",
                            "function": {"name": tool, "arguments": json.dumps(args, sort_keys=True)}}]}
