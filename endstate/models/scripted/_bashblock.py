"""The control arms in a text-action agent's own format: one fenced shell command a turn.

An agent such as mini-swe-agent reads no tool calls: each answer must hold exactly one
fenced block (```<fence> ... ```) with one command, and the run ends when it runs the
agent's submit command. Its model proxy says so in ACTION_FORMAT_HEADER (the fence and
the submit command, as JSON). The trajectory a policy plays is flattened to one call a
turn and each call written as a shell command that does what the tool did:

    bash        the command itself
    read_file   cat -- PATH
    write_file  python3 writes the exact bytes (base64), making folders as needed
    edit_file   python3 replaces the one occurrence of `old` (base64) by `new`, or exits 1

After the last call comes the submit command; the null arm submits at once. Every
answer is a function of (policy, task, turn): no clock, no randomness.
"""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Callable
from typing import Any

__all__ = ["ACTION_FORMAT_HEADER", "bash_block_answer", "as_command", "flat_calls"]

#: Set by endstate's model proxy for an agent that reads fenced commands: {"fence": ..., "submit": ...}.
ACTION_FORMAT_HEADER = "X-Endstate-Action-Format"

#: More calls than any trajectory holds: the flattening stops there.
_MAX_CALLS = 500

_WRITE = ("import base64, os, sys; p = sys.argv[1]; d = os.path.dirname(p); d and os.makedirs(d, exist_ok=True); "
          "open(p, 'wb').write(base64.b64decode(sys.argv[2]))")
_EDIT = ("import base64, sys; p = sys.argv[1]; o, n = (base64.b64decode(a).decode() for a in sys.argv[2:4]); "
         "t = open(p, 'rb').read().decode(); c = t.count(o) if o else 0; "
         "c == 1 or sys.exit('edit_file: old text occurs %d times in %s' % (c, p)); "
         "open(p, 'wb').write(t.replace(o, n, 1).encode())")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def as_command(tool: str, args: dict[str, Any]) -> str:
    """One tool call of endstate's loop as a shell command with the same effect."""
    if tool == "bash":
        return str(args["command"])
    path = shlex.quote(str(args["path"]))
    if tool == "read_file":
        return f"cat -- {path}"
    if tool == "write_file":
        return f"python3 -c {shlex.quote(_WRITE)} {path} {_b64(str(args['content']))}"
    if tool == "edit_file":
        return f"python3 -c {shlex.quote(_EDIT)} {path} {_b64(str(args['old']))} {_b64(str(args['new']))}"
    raise ValueError(f"no shell form for tool {tool!r}")


def flat_calls(play: Callable[[Any, str, int | None], dict[str, Any]], task: Any) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for turn in range(_MAX_CALLS):
        message = play(task, "agent", turn)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            calls.append((call["function"]["name"], json.loads(call["function"]["arguments"])))
    return calls


def bash_block_answer(play: Callable[[Any, str, int | None], dict[str, Any]], task: Any, turn: int,
                      action_format: str) -> dict[str, Any]:
    """The assistant message for `turn` of the policy `play`, in the format the header describes."""
    spec = json.loads(action_format)
    fence, submit = str(spec["fence"]), str(spec["submit"])
    calls = flat_calls(play, task)
    if turn < len(calls):
        tool, args = calls[turn]
        thought, command = f"THOUGHT: step {turn + 1} of {len(calls)}: {tool}.", as_command(tool, args)
    else:
        thought, command = "THOUGHT: the work is done; submitting.", submit
    return {"role": "assistant", "content": f"{thought}\n\n```{fence}\n{command}\n```"}
