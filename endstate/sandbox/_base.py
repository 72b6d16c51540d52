"""The one interface every sandbox backend implements."""

from __future__ import annotations

import abc
from typing import ClassVar

import msgspec

from endstate.sandbox._tree import Tree

__all__ = ["ExecResult", "Sandbox", "SandboxLimits", "WORKDIR", "HOSTNAME", "SANDBOX_ENV", "DEFAULT_IMAGE", "output_text"]

#: Where the task's files live inside every sandbox.
WORKDIR = "/workspace"

#: The image sandboxes start from unless a task names its own (built by `endstate image build`).
DEFAULT_IMAGE = "endstate-sandbox:2"

HOSTNAME = "sandbox"

#: The fixed environment of every command, in every backend.
SANDBOX_ENV = {
    "TZ": "UTC",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "HOME": "/home/agent",
}


def output_text(data: bytes, dropped: int) -> str:
    """Captured bytes as text, with a line saying how much was cut, if anything was."""
    text = data.decode("utf-8", errors="replace")
    if dropped:
        if text and not text.endswith("\n"):
            text += "\n"
        text += f"[endstate: output truncated: {dropped} bytes dropped]\n"
    return text


class ExecResult(msgspec.Struct, frozen=True):
    """What one command did. Output is decoded as UTF-8 with replacement."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    #: True when stdout or stderr was cut at the output cap (the text says so too).
    truncated: bool = False
    duration_s: float = 0.0
    #: True when the kernel killed a process of the command for want of memory (the text says so too).
    oom_killed: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class SandboxLimits(msgspec.Struct, frozen=True):
    memory_mb: int = 1024
    pids: int = 256
    cpus: float = 1.0
    #: Default wall-clock limit of one command; a command's own timeout overrides it.
    command_timeout_s: float = 120.0
    #: Bytes of stdout and of stderr kept per command; the rest is cut and reported.
    output_cap_bytes: int = 64 * 1024
    network: bool = False
    #: The workspace may hold this much (apparent size); past it the run ends (WorkspaceFull).
    workspace_mb: int = 512
    #: Size of each tmpfs outside the workspace (/tmp, /var/tmp, /dev/shm, the agent's home).
    tmp_mb: int = 256
    #: The largest file a command may write (`ulimit -f`); a larger write fails with SIGXFSZ.
    file_mb: int = 256
    #: Who the agent works as: uid 1000 (`agent`), or 0 for a task whose agent works as root (a
    #: Harbor task's, as Harbor runs it): root gets Docker's default capabilities in its own
    #: container, never in a grading one.
    agent_uid: int = 1000


class Handle(msgspec.Struct, frozen=True, tag_field="backend"):
    """How another process reaches a sandbox (`Sandbox.handle()` -> the backend's `attach`).
    Encoded as JSON in job files: `backend` names the backend (the tag), the rest is the backend's."""

    limits: SandboxLimits = SandboxLimits()


class DockerHandle(Handle, frozen=True, tag="docker"):
    container: str = ""
    image: str = ""
    image_id: str = ""


class LocalHandle(Handle, frozen=True, tag="local"):
    workspace: str = ""


#: Every backend's handle, decoded by its `backend` tag.
SandboxHandle = DockerHandle | LocalHandle


class Sandbox(abc.ABC):
    """A disposable place where one task's files live and commands run.

    Paths given to the file methods are relative to `WORKDIR`. Commands run
    through `bash -c` with `WORKDIR` as the working directory, a fixed hostname,
    TZ=UTC, LANG=C.UTF-8 and PYTHONHASHSEED=0.

    Lifecycle: a backend's constructor creates the sandbox; `close()` removes it
    and is safe to call twice. A sandbox made in one process can be reached from
    another with `handle()` and the backend's `attach(handle)`; the process that
    created it stays its owner and is the one to close it.
    """

    backend: ClassVar[str]

    @abc.abstractmethod
    def exec(self, command: str, *, timeout: float | None = None) -> ExecResult:
        """Run a shell command. Never raises for a failing or timed-out command:
        the result says so. A timeout kills the command and every process it
        started. Raises SandboxError if the sandbox itself is gone, and WorkspaceFull
        (after killing every process of the agent) once the workspace has grown past
        `SandboxLimits.workspace_mb`."""

    @abc.abstractmethod
    def read_file(self, path: str) -> bytes:
        """Bytes of a file, read as the agent would. Raises FileNotFoundError if there is
        none, PermissionError if it resolves out of the workspace or the agent may not read it."""

    @abc.abstractmethod
    def write_file(self, path: str, data: bytes) -> None:
        """Create or replace a file as the agent would, making parent folders as needed;
        an executable file stays executable. PermissionError as for `read_file`."""

    def edit_file(self, path: str, old: str, new: str) -> int:
        """Replace the one occurrence of `old` in a UTF-8 text file by `new`, as the agent
        would. Returns how often `old` occurs; the file is written only when that is 1 (an
        empty `old` occurs 0 times). Raises as `read_file` and `write_file` do, and
        ValueError for a file that is not UTF-8 text. Backends may do it in one round trip."""
        text = self.read_file(path).decode("utf-8")
        count = text.count(old) if old else 0
        if count == 1:
            self.write_file(path, text.replace(old, new, 1).encode("utf-8"))
        return count

    @abc.abstractmethod
    def put_tree(self, tree: Tree) -> None:
        """Write every file of `tree` into the workspace (modes kept, mtimes fixed)."""

    @abc.abstractmethod
    def get_tree(self, *, max_bytes: int | None = None, sealing: bool = False) -> Tree:
        """Every regular file and symlink now in the workspace. Raises SandboxError
        when the files hold more than `max_bytes` (reading stops there) and, `sealing`,
        when the workspace holds what a Tree cannot carry (see `_tree.unsealable`), naming it."""

    # -- the harness's own access: sealing and grading, never the agent's tools -----
    @abc.abstractmethod
    def stop(self) -> None:
        """End every process in the sandbox for good; its files stay readable."""

    @abc.abstractmethod
    def put_harness_tree(self, tree: Tree, *, at: str = WORKDIR, owner: str = "root") -> None:
        """Write `tree` into the absolute folder `at` as the harness. `owner="root"`
        makes the files and the folder read-only to the agent user; "agent" makes
        them its own; "private" makes the folder root's alone (mode 0700: the agent
        user can neither list nor read it); "scratch" keeps the files root's and read-only but lets the
        agent user add files to every folder (sticky folders, like /tmp): a graded
        test run's copy of the tree, which the tests may write beside."""

    def put_harness_trees(self, trees: dict[str, tuple[Tree, str]]) -> None:
        """`put_harness_tree` for several absolute folders (folder -> (tree, owner)), in one
        write where the backend can."""
        for at, (tree, owner) in trees.items():
            self.put_harness_tree(tree, at=at, owner=owner)

    def bound_folders(self, sizes: dict[str, int]) -> bool:
        """Make each absolute folder (folder -> bytes) a file system of its own, empty, that
        holds at most that many bytes, over whatever the folder held: what a process writes
        there past it fails with ENOSPC and costs the host's disk nothing. False where this
        backend cannot (the folders are then left as they are). Only a grading sandbox's
        harness asks for it, and gives each back with `release_folders`."""
        return False

    def release_folders(self, folders: list[str]) -> None:
        """Drop what `bound_folders` made, with everything written there; the folder shows
        what it held before (a folder made for it is removed). Never fails."""

    @abc.abstractmethod
    def read_folder(self, path: str, *, max_bytes: int) -> Tree:
        """Every regular file below an absolute folder, read as the harness in one go;
        FileNotFoundError if there is none, FolderTooLarge past `max_bytes`."""

    @abc.abstractmethod
    def read_path(self, path: str, *, max_bytes: int) -> bytes:
        """Bytes of a file anywhere in the sandbox (absolute path), read as the
        harness; FileNotFoundError if there is none, SandboxError past `max_bytes`."""

    @abc.abstractmethod
    def handle(self) -> SandboxHandle:
        """What `attach` reaches this sandbox from in another process (encode it with msgspec)."""

    @classmethod
    @abc.abstractmethod
    def attach(cls, handle: SandboxHandle) -> "Sandbox":
        """The sandbox described by `handle`, without taking ownership of it."""

    @abc.abstractmethod
    def close(self) -> None:
        """Remove the sandbox and everything in it. Idempotent."""

    def exec_wrapped(self, command: str, wrapper: list[str], *, timeout: float | None = None) -> ExecResult:
        """`exec`, the command's user process started by `wrapper` (the argv of a program of the
        harness's own, run as root, that ends by running the rest of its argv) where this backend
        starts commands as root; elsewhere (no root, or no grading sandbox) the same as `exec`."""
        return self.exec(command, timeout=timeout)

    def spawn_root(self, argv: list[str]) -> bool:
        """Start a program of the harness's own as root in the background, its output
        discarded, and return at once: False where this backend cannot (the caller then
        does without it). Only a grading sandbox's harness asks for it."""
        return False

    def ready(self) -> None:
        """Open now what the first command would otherwise open (a backend's connection
        into the sandbox), so that a sandbox made ahead of time costs nothing when used."""

    def describe(self) -> dict[str, str]:
        """Facts about this sandbox for the run card (backend, image id, ...)."""
        return {"backend": self.backend}

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
