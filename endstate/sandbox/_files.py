"""The file tools of a Docker sandbox (`read_file`, `write_file`, `edit_file`), as requests on its channel.

They run as the agent user, see what the agent may see, and refuse any path that resolves
out of the workspace. The in-sandbox server does the plain case itself in a child that has
become the agent user, and hands every other case to the tool's script (`_scripts._READ`,
`_WRITE`), which words the errors.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from endstate.errors import SandboxError
from endstate.sandbox._base import WORKDIR
from endstate.sandbox._scripts import _AGENT_ENV, _EOF, _READ, _WRITE, AGENT_UID, as_agent
from endstate.sandbox._tree import FIXED_MTIME

__all__ = ["DockerFileTools"]

#: Off: every file tool runs its script (what the native path must match, see the tests).
_NATIVE_FILE_TOOLS = True


def _inside(path: str) -> str:
    """The absolute container path of a workspace-relative path; refuses escapes."""
    full = posixpath.normpath(posixpath.join(WORKDIR, path))
    if not full.startswith(WORKDIR + "/"):
        raise ValueError(f"path {path!r} is not inside the workspace")
    return full


class DockerFileTools:
    """The file tools of `DockerSandbox`, which provides `_agent_request` (one request on its channel)."""

    @staticmethod
    def _file_error(path: str, code: int, stderr: bytes) -> OSError:
        said = stderr.decode("utf-8", errors="replace").strip()
        if code == 2:
            return FileNotFoundError(f"{path} does not exist in the sandbox")
        if code == 3:
            return PermissionError(f"{path} resolves to {said}, outside the workspace: refused")
        if code == 4:
            return IsADirectoryError(f"{path} is a directory in the sandbox")
        said = re.sub(r"^(cat|bash: line \d+): ", "", said).replace(WORKDIR + "/", "")
        return PermissionError(f"{path}: {said or f'failed with exit code {code}'}")

    # Each file tool ends its output with a marker (and the written size): output cut short
    # is told from an empty file, and the call is made again.
    _FILE_TOOL_TRIES = 3

    def _file_request(self, op: str, path: str) -> dict[str, Any]:
        """A file tool's request: the server does it natively as the agent user when the
        plain case holds, and otherwise runs the script (`_READ`, `_WRITE`), which words
        every error."""
        full = _inside(path)
        uid = getattr(self, "_agent_uid", AGENT_UID)
        agent = as_agent(uid)
        if op != "edit" and not _NATIVE_FILE_TOOLS:  # tests compare both ways
            return {"op": "run", "cwd": WORKDIR, "env": _AGENT_ENV, "stdin": op == "write",
                    "argv": [*agent, "bash", "-c", _READ if op == "read" else _WRITE, "endstate", full,
                             *([str(FIXED_MTIME)] if op == "write" else [])]}
        return {"op": op, "path": full, "uid": uid, "mtime": FIXED_MTIME, "eof": _EOF.decode(),
                "cwd": WORKDIR, "env": _AGENT_ENV,
                "read": [*agent, "bash", "-c", _READ, "endstate", full],
                "write": [*agent, "bash", "-c", _WRITE, "endstate", full, str(FIXED_MTIME)]}

    def read_file(self, path: str) -> bytes:
        for _ in range(self._FILE_TOOL_TRIES):
            reply, data, stderr = self._agent_request(self._file_request("read", path), b"")
            if reply["code"] != 0:
                raise self._file_error(path, reply["code"], stderr)
            if data.endswith(_EOF):
                return data[:-len(_EOF)]
        raise SandboxError(f"reading {path} in container {self._container.short_id} lost its output "
                           f"{self._FILE_TOOL_TRIES} times")

    def write_file(self, path: str, data: bytes) -> None:
        for _ in range(self._FILE_TOOL_TRIES):
            reply, out, stderr = self._agent_request(self._file_request("write", path), data)
            if reply["code"] != 0:
                raise self._file_error(path, reply["code"], stderr)
            if out == _EOF + b" " + str(len(data)).encode():
                return
        raise SandboxError(f"writing {path} in container {self._container.short_id} did not land whole "
                           f"{self._FILE_TOOL_TRIES} times")

    def edit_file(self, path: str, old: str, new: str) -> int:
        """Read, count and write in one request, the same way as `read_file` and `write_file`."""
        old_bytes, new_bytes = old.encode("utf-8"), new.encode("utf-8")
        request = {**self._file_request("edit", path), "old": len(old_bytes), "new": len(new_bytes)}
        reply, out, stderr = self._agent_request(request, old_bytes + new_bytes)
        stage, code = reply["stage"], reply["code"]
        if stage in ("read", "write") and code != 0:
            raise self._file_error(path, code, stderr)
        if stage == "read":
            raise SandboxError(f"reading {path} in container {self._container.short_id} lost its output")
        if stage == "decode":
            raise ValueError(f"{path} is not UTF-8 text")
        if stage == "write" and not out.startswith(_EOF):
            raise SandboxError(f"writing {path} in container {self._container.short_id} did not land whole")
        return int(reply["count"])
