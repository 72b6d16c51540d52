"""The exceptions endstate raises, all under one base.

    EndstateError                  anything endstate reports to a user
    ├── UserError                  bad input: exit 2, one line, no traceback
    │   ├── ManifestError          a task.toml that does not decode or validate
    │   ├── PolicyError            a policy file or table that does not decode or validate
    │   ├── FixtureError           a missing fixture, or a symlink escaping it
    │   ├── GraderContractError    a grader whose signature breaks the contract
    │   ├── ModelSpecError         unknown provider, malformed spec, missing key
    │   ├── CassetteError          a cassette that is missing, corrupt or foreign
    │   ├── AgentFileError         an agent file that does not decode, or an agent a task cannot use
    │   ├── SandboxUnavailable     the requested backend cannot run here
    │   │   └── ResolutionTimedOut a task image's dependencies did not resolve in the time given
    │   └── WriteError             a folder endstate must write to refuses the bytes
    ├── SandboxError               the sandbox failed while a task ran
    │   ├── WorkspaceFull          the workspace grew past its size ceiling
    │   └── FolderTooLarge         a folder the harness read held more than its cap
    └── ReplayDivergence           replay met a request with no recorded answer

A user error is raised before the work it concerns starts, so the CLI can print it
and carry on with other tasks. ReplayDivergence is reported apart from pass/fail:
it says the harness or the recording changed, not that the agent failed.
"""

from __future__ import annotations

import difflib
import errno
import os
from typing import Any

__all__ = [
    "EndstateError",
    "UserError",
    "ManifestError",
    "PolicyError",
    "FixtureError",
    "GraderContractError",
    "ModelSpecError",
    "CassetteError",
    "AgentFileError",
    "SandboxUnavailable",
    "ResolutionTimedOut",
    "WriteError",
    "cannot_write",
    "did_you_mean",
    "strict_message",
    "SandboxError",
    "WorkspaceFull",
    "FolderTooLarge",
    "CommandWedged",
    "ContainerGone",
    "ReplayDivergence",
]


class EndstateError(Exception):
    """Base of every error endstate raises on purpose."""


class UserError(EndstateError):
    """Bad input from the user: reported as one line, exit code 2."""

    exit_code = 2


class ManifestError(UserError):
    """A task manifest that does not decode or validate; names file and field."""


class PolicyError(UserError):
    """A policy file or table that does not decode or validate; names source and field."""


class FixtureError(UserError):
    """A task fixture that is missing or unsafe to copy."""


class GraderContractError(UserError):
    """A grader whose signature could let it see more than the end state."""


class ModelSpecError(UserError):
    """A model spec that names no known provider, or lacks what it needs."""


class CassetteError(UserError):
    """A cassette that is missing, corrupt, of another format or for another task."""


class AgentFileError(UserError):
    """An agent file that does not decode or validate (names file and field), an unknown
    agent name, or an agent that cannot be used as asked."""


class SandboxUnavailable(UserError):
    """The sandbox backend asked for cannot run on this machine."""


class ResolutionTimedOut(SandboxUnavailable):
    """pip did not resolve a task image's requirements in the time a resolution is given: no later,
    looser attempt is made (it would backtrack as long)."""


class SandboxError(EndstateError):
    """The sandbox failed while a task was running (an ERROR outcome, not a FAIL)."""


class ContainerGone(SandboxError):
    """The harness's command runner lost its container: removed, or stopped, from outside while a
    task used it (the engine, an operator; an agent cannot stop its own container, see
    `first_process`). A fault of the machinery, run again (run/_faults.py), never the agent's."""


class CommandWedged(SandboxError):
    """A command outlived its deadline and the sandbox's own watchdog did not end it: the
    harness's runner in the container is stuck, and the container was killed. A fault of the
    machinery (the task is run again, see run/_faults.py), never a verdict on the agent:
    graders do not turn it into an ERROR verdict. Unless the end state's own processes ran
    beside the runner (a root task's services): then `frozen` says what the container ran,
    frozen, before it was killed (None when it could not be frozen)."""

    frozen: str | None = None


class FolderTooLarge(SandboxError):
    """A folder the harness reads back (a test run's report folder) held more than the read's
    cap. What is in that folder was written by the process under test: a grader that meets this
    fails the run as tampering; it is never the harness's fault."""


class WorkspaceFull(SandboxError):
    """A command left the workspace larger than its ceiling; the agent's processes were killed.
    The agent loop ends the run on it (stop reason `disk_limit`), and the task fails."""


class ReplayDivergence(EndstateError):
    """Replay met a request with no recorded answer.

    Carries the task, the turn and the request hash, and the closest recorded
    request so the user can see what changed.
    """

    def __init__(self, message: str, *, task: str = "", turn: int | None = None,
                 request_hash: str = "", closest: str = "") -> None:
        super().__init__(message)
        self.task = task
        self.turn = turn
        self.request_hash = request_hash
        self.closest = closest


class WriteError(UserError):
    """A folder endstate writes its output to refused it (read-only, full, no permission)."""


_WHY = {errno.EROFS: "read-only file system", errno.ENOSPC: "disk full", errno.EDQUOT: "disk full (quota exceeded)",
        errno.EACCES: "permission denied", errno.EPERM: "permission denied"}


def cannot_write(folder: os.PathLike[str] | str, exc: OSError, flag: str = "--out") -> WriteError:
    """The one line for an OSError met writing into `folder`: which folder, why in words, what to do."""
    why = _WHY.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    fix = f"free space there or pass another {flag}" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else \
        f"pass another {flag}"
    return WriteError(f"cannot write {os.fspath(folder)}: {why}; {fix}")


def did_you_mean(name: str, known: list[str]) -> str:
    """": did you mean X?" naming the closest of `known` to a mistyped `name`, or "" when none is close."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f": did you mean {close[0]}?" if close else ""


def strict_message(exc: Exception, kind: Any, data: Any = None) -> str:
    """msgspec's message for a file a person wrote, with what is valid where it failed: the fields
    of the table that holds an unknown one, or the values an enum, a literal or a `kind` takes.
    `kind` is the type the file was decoded as; `data` the decoded TOML, to pick a tagged variant."""
    import re

    text = str(exc).replace("Object contains unknown field", "unknown field")
    found = re.search(r"- at `\$([^`]*)`", text)
    path = re.findall(r"\.([A-Za-z_][\w-]*)|\[(\d+|\.\.\.)\]", found[1]) if found else []
    info, value = _type_at(kind, data, path)
    unknown = text.startswith("unknown field")
    valid = _fields(info) if unknown else _values(info)
    if valid:
        text += f" ({'valid fields there' if unknown else 'valid values'}: {', '.join(valid)})"
    elif unknown:
        text += " (remove it or fix its spelling)"
    return text


def _type_at(kind: Any, data: Any, path: list[tuple[str, str]]) -> tuple[Any, Any]:
    import msgspec

    info = msgspec.inspect.type_info(kind)
    for name, index in path:
        picked = _variant(info, data)
        if isinstance(picked, msgspec.inspect.UnionType) and name in {getattr(t, "tag_field", None) for t in picked.types}:
            return picked, data  # the tag itself is what is wrong
        info = picked
        if name and isinstance(info, msgspec.inspect.StructType):
            field = next((f for f in info.fields if f.encode_name == name), None)
            if field is None:
                return None, None
            info, data = field.type, data.get(name) if isinstance(data, dict) else None
        elif name and isinstance(info, msgspec.inspect.DictType):
            info, data = info.value_type, data.get(name) if isinstance(data, dict) else None
        elif index and isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.VarTupleType,
                                         msgspec.inspect.DictType)):
            item = info.value_type if isinstance(info, msgspec.inspect.DictType) else info.item_type
            picked = data[int(index)] if index.isdigit() and isinstance(data, list) and int(index) < len(data) else None
            info, data = item, picked
        else:
            return None, None
    return _variant(info, data), data


def _variant(info: Any, data: Any) -> Any:
    """The member of a union the data means: the struct its tag names, else the one non-None member."""
    import msgspec

    if not isinstance(info, msgspec.inspect.UnionType):
        return info
    members = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
    structs = [t for t in members if isinstance(t, msgspec.inspect.StructType) and t.tag_field]
    if structs and isinstance(data, dict):
        tag = data.get(structs[0].tag_field)
        return next((t for t in structs if t.tag == tag), info)
    return members[0] if len(members) == 1 else info


def _fields(info: Any) -> list[str]:
    import msgspec

    return [f.encode_name for f in info.fields] if isinstance(info, msgspec.inspect.StructType) else []


def _values(info: Any) -> list[str]:
    import msgspec

    if isinstance(info, msgspec.inspect.EnumType):
        return [repr(member.value) for member in info.cls]
    if isinstance(info, msgspec.inspect.LiteralType):
        return [repr(value) for value in info.values]
    if isinstance(info, msgspec.inspect.UnionType):  # an unknown tag: the kinds there are
        return [repr(t.tag) for t in info.types if isinstance(t, msgspec.inspect.StructType) and t.tag is not None]
    return []
