"""Folders of a Docker grading sandbox bounded in size (`Sandbox.bound_folders`), for the
places a process of the end state may write while it is graded.

Each is a tmpfs mounted by root over the folder, through the sandbox's channel: its pages
are counted in the container's memory limit, never on the host's disk, and a write past its
size is ENOSPC for the writer alone. Released (a lazy unmount) once the harness has read what
it needed there, so a full one never meets a later write of the harness's own.
"""

from __future__ import annotations

from endstate.errors import SandboxError

__all__ = ["BoundedFolders"]

#: Args: FOLDER BYTES pairs. Mounted nosuid and nodev, as the container's own tmpfs are.
_BOUND = """while [ "$#" -gt 1 ]; do
  mkdir -p -m 0755 -- "$1" && mount -t tmpfs -o "size=$2,mode=0755,nosuid,nodev" endstate-bounded "$1" || exit 1
  shift 2
done"""
#: Args: FOLDERS. A folder made for the mount is left empty by it, and removed.
_RELEASE = """for d; do umount -l -- "$d" && rmdir -- "$d"; done 2>/dev/null; exit 0"""


class BoundedFolders:
    """`bound_folders` and `release_folders` of `DockerSandbox`, which provides `_grading` and
    `_agent_request` (one request on its channel, run as root)."""

    _grading: bool

    def bound_folders(self, sizes: dict[str, int]) -> bool:
        if not (self._grading and sizes):
            return False
        pairs = [word for folder, size in sizes.items() for word in (folder, str(max(size, 4096)))]
        request = {"op": "run", "cwd": "/", "argv": ["bash", "-c", _BOUND, "endstate", *pairs]}
        reply, _, stderr = self._agent_request(request, b"", doing="bounding a folder")
        if reply["code"] != 0:
            said = stderr.decode("utf-8", errors="replace").strip()[-200:]
            raise SandboxError(f"could not bound {', '.join(sizes)} in the grading sandbox: {said}")
        return True

    def release_folders(self, folders: list[str]) -> None:
        if not (self._grading and folders):
            return
        request = {"op": "run", "cwd": "/", "argv": ["bash", "-c", _RELEASE, "endstate", *folders]}
        try:
            self._agent_request(request, b"", doing="releasing a bounded folder")
        except SandboxError:
            pass  # the sandbox is gone, and the mounts with it
