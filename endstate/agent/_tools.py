"""The agent's four tools, executed in the task's sandbox after the policy allows them."""

from __future__ import annotations

import json
import posixpath
from typing import Any

from endstate.models import ToolSchema
from endstate.sandbox import WORKDIR, Sandbox

__all__ = ["TOOLS", "FINISH_TOOL", "ToolError", "parse_arguments", "run_tool", "MAX_READ_BYTES"]

MAX_READ_BYTES = 64 * 1024

#: The shortest timeout a model may ask for.
MIN_TIMEOUT_S = 1.0
#: What the result of a command killed at its timeout says, first line.
_TIMED_OUT = "timed out after"

_PATH = {"type": "string", "description": "Path relative to the project root (/workspace)."}

TOOLS: tuple[ToolSchema, ...] = (
    ToolSchema(
        "bash",
        "Run a bash command in the project root and return its exit code, stdout and stderr.",
        {"type": "object", "properties": {
            "command": {"type": "string", "description": "The command line to run."},
            "timeout": {"type": "number", "description": "Seconds before the command is killed."},
        }, "required": ["command"], "additionalProperties": False},
    ),
    ToolSchema(
        "read_file",
        "Return the text of a file.",
        {"type": "object", "properties": {"path": _PATH}, "required": ["path"], "additionalProperties": False},
    ),
    ToolSchema(
        "write_file",
        "Create or replace a file with the given text.",
        {"type": "object", "properties": {"path": _PATH, "content": {"type": "string"}},
         "required": ["path", "content"], "additionalProperties": False},
    ),
    ToolSchema(
        "edit_file",
        "Replace the one occurrence of `old` in a file with `new`. Fails if `old` occurs zero or several times.",
        {"type": "object", "properties": {"path": _PATH, "old": {"type": "string"}, "new": {"type": "string"}},
         "required": ["path", "old", "new"], "additionalProperties": False},
    ),
)

#: Offered only when the model is forced to call a tool every turn: how it says it is done.
FINISH_TOOL = ToolSchema(
    "finish",
    "Call when the task is complete (or cannot be completed), with a one-line summary.",
    {"type": "object", "properties": {"summary": {"type": "string"}}, "required": [], "additionalProperties": False},
)

_REQUIRED = {schema.name: tuple(schema.parameters["required"]) for schema in (*TOOLS, FINISH_TOOL)}
_TYPES = {"command": str, "path": str, "content": str, "old": str, "new": str, "summary": str}


class ToolError(Exception):
    """A tool call that cannot run as asked; its message goes back to the model."""


def parse_arguments(name: str, raw: str) -> dict[str, Any]:
    """Decode and check a tool call's arguments; raises ToolError saying what is wrong."""
    if name not in _REQUIRED:
        raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(sorted(_REQUIRED))}")
    try:
        args = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ToolError(f"arguments of {name} are not valid JSON ({exc.msg} at position {exc.pos})") from None
    if not isinstance(args, dict):
        raise ToolError(f"arguments of {name} must be a JSON object")
    missing = [key for key in _REQUIRED[name] if key not in args]
    if missing:
        raise ToolError(f"{name} needs {', '.join(missing)}")
    for key, value in args.items():
        expected = _TYPES.get(key)
        if expected is not None and not isinstance(value, expected):
            raise ToolError(f"argument {key!r} of {name} must be a string")
    if name == "bash" and "timeout" in args and not isinstance(args["timeout"], (int, float)):
        raise ToolError("argument 'timeout' of bash must be a number of seconds")
    return args


def _relative(path: str) -> str:
    """A workspace-relative path; the policy has already refused escapes."""
    clean = posixpath.normpath(path)
    if clean.startswith(WORKDIR + "/"):
        clean = clean[len(WORKDIR) + 1:]
    if clean.startswith("/") or clean == ".." or clean.startswith("../"):
        raise ToolError(f"path {path!r} is outside the project")
    return clean


def run_tool(sandbox: Sandbox, name: str, args: dict[str, Any], *, timeout: float,
             recorded: str | None = None) -> str:
    """Execute one allowed tool call and return the text the model will read.

    `recorded` (replay only): what this call returned in the recorded run. Whether a command
    beat the timeout its model asked for is a race the machine's speed decides; replay
    settles it the way the recording did. A command that finished then is given the budget's
    whole timeout now, so a slower or busier machine cannot turn it into a timeout (and the
    next request into a divergence)."""
    if name == "bash":
        # A model's own timeout may shorten the budget's, never lengthen it; zero or less means
        # "no preference", and under a second only races the command.
        asked = float(args.get("timeout", timeout))
        limit = timeout if asked <= 0 else min(max(asked, MIN_TIMEOUT_S), timeout)
        finished_then = recorded is not None and _TIMED_OUT not in recorded.split("\n", 1)[0]
        result = sandbox.exec(args["command"], timeout=timeout if finished_then else limit)
        if result.timed_out:
            # What a killed command printed depends on when the kill landed: keep none of it,
            # so the transcript (and the next request) is the same in every run.
            return (f"exit code: {result.exit_code} ({_TIMED_OUT} {limit:g} s; output of a timed-out "
                    "command is not kept, since it depends on timing)")
        parts = [f"exit code: {result.exit_code}"]
        if result.stdout:
            parts.append("stdout:\n" + result.stdout)
        if result.stderr:
            parts.append("stderr:\n" + result.stderr)
        return "\n".join(parts)
    path = _relative(args["path"])
    if name == "read_file":
        try:
            data = sandbox.read_file(path)
        except FileNotFoundError:
            raise ToolError(f"no file {path!r}") from None
        except IsADirectoryError:
            raise ToolError(f"{path!r} is a directory") from None
        except OSError as exc:  # the agent user may not read it, or it leads out of the workspace
            raise ToolError(str(exc)) from None
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_READ_BYTES:
            text += f"\n[endstate: file truncated: {len(data) - MAX_READ_BYTES} more bytes]"
        return text
    if name == "write_file":
        try:
            sandbox.write_file(path, args["content"].encode("utf-8"))
        except OSError as exc:
            raise ToolError(str(exc)) from None
        return f"wrote {len(args['content'].encode('utf-8'))} bytes to {path}"
    if name == "edit_file":
        try:
            count = sandbox.edit_file(path, args["old"], args["new"])
        except FileNotFoundError:
            raise ToolError(f"no file {path!r}") from None
        except OSError as exc:
            raise ToolError(str(exc)) from None
        except ValueError:  # not UTF-8 text
            raise ToolError(f"{path} is not UTF-8 text; change it with bash") from None
        if count == 0:
            raise ToolError(f"`old` does not occur in {path}; read the file and copy the text exactly")
        if count > 1:
            raise ToolError(f"`old` occurs {count} times in {path}; include more context so it is unique")
        return f"edited {path}"
    raise ToolError(f"unknown tool {name!r}")


