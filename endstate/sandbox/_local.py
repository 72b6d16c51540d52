"""The local backend: bubblewrap, for machines without a Docker engine.

A host temp folder is the workspace, bound read-write at /workspace. The rest of
the host is mounted read-only, except what a sandbox must not see at all: /root,
/home and /run (where the Docker socket lives) are replaced by empty tmpfs, and
/tmp is a fresh tmpfs per command. Each command gets its own user, PID, network,
IPC and UTS namespaces: no network, hostname `sandbox`, uid 1000.

Weaker than Docker, and different in four ways worth knowing:
memory, pids and CPU limits are not enforced (the timeout, the output cap, the
tmpfs sizes and the largest file are); /tmp does not survive from one command to
the next; a command's background processes die with it, because its PID
namespace ends when it does; and the workspace ceiling is checked after each
command, not while it runs.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import IO, Any

from endstate.errors import FolderTooLarge, SandboxError, SandboxUnavailable, WorkspaceFull
from endstate.sandbox._base import (
    HOSTNAME,
    SANDBOX_ENV,
    WORKDIR,
    ExecResult,
    LocalHandle,
    Sandbox,
    SandboxHandle,
    SandboxLimits,
    output_text,
)
from endstate.sandbox._tree import FIXED_MTIME, FROZEN_ATIME, FileEntry, Tree, normalise_mode, unsealable

__all__ = ["LocalSandbox"]

#: File kinds a workspace may hold that a Tree has no entry for (see `_tree.unsealable`).
_KINDS = {stat.S_IFIFO: "a fifo", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device"}

#: Top-level host folders replaced by something empty, or by the sandbox's own.
_NOT_SHARED = frozenset({"proc", "dev", "tmp", "run", "home", "root", "sys", "lost+found", WORKDIR.strip("/")})
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CHUNK = 64 * 1024
_MIB = 1024 * 1024


def _freeze_folders(root: Path, tree: Tree) -> None:
    """`root` and the folders in it `tree` was written into get FROZEN_ATIME (their files got it
    as they were written): listing them changes nothing a later command could read."""
    folders = {root}
    for path in tree:
        folders.update(parent for parent in (root / path).parents if root in parent.parents)
    for folder in folders:
        with contextlib.suppress(OSError):
            os.utime(folder, (FROZEN_ATIME, folder.stat().st_mtime))


def _remove_dir(path: str, owner_pid: int) -> None:
    if os.getpid() != owner_pid:
        return  # a forked child exiting must not take its parent's workspace along
    def make_writable_and_retry(func: Any, failed: str, _exc: Any) -> None:
        os.chmod(os.path.dirname(failed), 0o700)  # a folder the agent made read-only
        func(failed)

    if not os.path.isdir(path):
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=make_writable_and_retry)
    else:
        shutil.rmtree(path, onerror=make_writable_and_retry)


class _CappedReader(threading.Thread):
    """Drains one pipe, keeping the first `cap` bytes and counting the rest."""

    def __init__(self, pipe: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.cap = pipe, cap
        self.kept = bytearray()
        self.dropped = 0

    def run(self) -> None:
        with self.pipe:
            while chunk := self.pipe.read1(_CHUNK):
                room = self.cap - len(self.kept)
                self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - room)


class LocalSandbox(Sandbox):
    backend = "local"

    def __init__(self, image: str = "", limits: SandboxLimits | None = None, name_hint: str = "task",
                 *, run_id: str = "", grading: bool = False, runtime: object = None) -> None:
        """`image`, `run_id`, `grading` and `runtime` are accepted so every backend is made the same way; the host is the image,
        and the workspace, a host folder, goes with the process (`--die-with-parent`)."""
        self.limits = limits or SandboxLimits()
        self._bwrap = shutil.which("bwrap")
        if self._bwrap is None:
            raise SandboxUnavailable(
                "bubblewrap (bwrap) is not installed: run `apt-get install -y bubblewrap`, or use --sandbox docker"
            )
        safe_hint = "".join(c if c.isalnum() or c in "-_." else "-" for c in name_hint)[:40]
        self.workspace = Path(tempfile.mkdtemp(prefix=f"endstate-{safe_hint}-"))
        self._readonly_workspace = False
        self._harness_hosts: list[str] = []
        #: Harness folders bound into every command: inside path -> (host path, writable).
        self._harness_dirs: dict[str, tuple[str, bool]] = {}
        self._finalizer: weakref.finalize | None = weakref.finalize(self, _remove_dir, str(self.workspace), os.getpid())
        try:
            probe = subprocess.run(self._command("true"), capture_output=True, timeout=30)
            if probe.returncode != 0:
                raise SandboxUnavailable(
                    "bwrap cannot make a sandbox on this machine (user namespaces disabled?): "
                    + probe.stderr.decode(errors="replace").strip()
                )
            self.bwrap_version = subprocess.run(
                [self._bwrap, "--version"], capture_output=True, text=True
            ).stdout.strip()
        except BaseException:
            self.close()
            raise

    def _command(self, command: str) -> list[str]:
        args = [
            self._bwrap, "--die-with-parent", "--new-session",
            "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--uid", "1000", "--gid", "1000", "--hostname", HOSTNAME,
            "--cap-drop", "ALL",
        ]
        for entry in sorted(os.scandir("/"), key=lambda e: e.name):
            if entry.name in _NOT_SHARED:
                continue
            if entry.is_symlink():
                args += ["--symlink", os.readlink(entry.path), entry.path]
            elif entry.is_dir():
                args += ["--ro-bind", entry.path, entry.path]
        args += [
            "--ro-bind-try", "/sys", "/sys",
            "--dev", "/dev", "--proc", "/proc",
        ]
        for folder in ("/tmp", "/run", "/root", "/home"):
            args += ["--size", str(self.limits.tmp_mb * _MIB), "--tmpfs", folder]
        args += [
            "--dir", SANDBOX_ENV["HOME"],
            "--ro-bind" if self._readonly_workspace else "--bind", str(self.workspace), WORKDIR,
        ]
        for inside, (host, writable) in sorted(self._harness_dirs.items()):
            args += ["--bind" if writable else "--ro-bind", host, inside]
        args += [
            "--remount-ro", "/", "--chdir", WORKDIR,
            "--clearenv", "--setenv", "PATH", _PATH, "--setenv", "HOSTNAME", HOSTNAME,
        ]
        for key, value in SANDBOX_ENV.items():
            args += ["--setenv", key, value]
        # The file-size limit is set before the command's own shell starts, so it cannot be raised.
        limit_files = 'ulimit -f "$1" && exec bash -c "$2"'
        return args + ["bash", "-c", limit_files, "bash", str(self.limits.file_mb * 1024), command]

    # -- commands -----------------------------------------------------------------
    def exec(self, command: str, *, timeout: float | None = None) -> ExecResult:
        if not self.workspace.is_dir():
            raise SandboxError(f"sandbox workspace {self.workspace} is gone")
        limit = self.limits.command_timeout_s if timeout is None else timeout
        started = time.monotonic()
        # Its own session, so one killpg reaches bwrap and everything under it.
        proc = subprocess.Popen(
            self._command(command), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )
        readers = [_CappedReader(proc.stdout, self.limits.output_cap_bytes),
                   _CappedReader(proc.stderr, self.limits.output_cap_bytes)]
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for reader in readers:
            reader.join()
        out, err = readers
        used = self._workspace_bytes()
        if used > self.limits.workspace_mb * _MIB:
            raise WorkspaceFull(f"the workspace grew past its ceiling of {self.limits.workspace_mb} MiB "
                                f"({used / _MIB:.0f} MiB)")
        return ExecResult(
            exit_code=124 if timed_out else proc.returncode,
            stdout=output_text(bytes(out.kept), out.dropped),
            stderr=output_text(bytes(err.kept), err.dropped),
            timed_out=timed_out,
            truncated=bool(out.dropped or err.dropped),
            duration_s=round(time.monotonic() - started, 3),
        )

    def _workspace_bytes(self) -> int:
        total = 0
        for dirpath, _, filenames in os.walk(self.workspace):
            for name in filenames:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_size
        return total

    # -- files --------------------------------------------------------------------
    def _host_path(self, path: str) -> Path:
        """Where a workspace-relative path lives on the host. Refuses anything,
        symlinks included, that would lead out of the workspace: the harness runs
        with the host's rights, the agent must not borrow them."""
        root = os.path.realpath(self.workspace)
        full = os.path.normpath(os.path.join(root, path))
        if not full.startswith(root + os.sep):
            raise ValueError(f"path {path!r} is not inside the workspace")
        parent = os.path.realpath(os.path.dirname(full))
        if parent != root and not parent.startswith(root + os.sep):
            raise PermissionError(f"{path}: a symlink leads out of the workspace")
        return Path(full)

    def read_file(self, path: str) -> bytes:
        target = self._host_path(path)
        real = os.path.realpath(target)
        if not real.startswith(os.path.realpath(self.workspace) + os.sep):
            raise PermissionError(f"{path} is a symlink leading out of the workspace")
        try:
            return Path(real).read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} does not exist in the sandbox") from None

    def write_file(self, path: str, data: bytes) -> None:
        target = self._host_path(path)
        try:
            mode = 0o755 if target.stat().st_mode & 0o111 else 0o644  # a script stays executable
        except (FileNotFoundError, NotADirectoryError):
            mode = 0o644
        self.put_tree({path: FileEntry(mode, data)})

    def put_tree(self, tree: Tree) -> None:
        for path in sorted(tree):
            target = self._host_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target = self._host_path(path)  # mkdir may have met a symlink: check again
            if target.is_symlink():
                target.unlink()  # replace the link, never write through it
            entry = tree[path]
            if entry.link:
                target.unlink(missing_ok=True)
                os.symlink(entry.link, target)
                continue
            target.write_bytes(entry.data)
            target.chmod(normalise_mode(entry.mode))
            os.utime(target, (FROZEN_ATIME, FIXED_MTIME))
        _freeze_folders(self.workspace, tree)

    def get_tree(self, *, max_bytes: int | None = None, sealing: bool = False) -> Tree:
        if not self.workspace.is_dir():
            raise SandboxError(f"sandbox workspace {self.workspace} is gone")
        tree: Tree = {}
        total = 0
        refused: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.workspace, followlinks=False):
            dirnames.sort()
            # A link to a folder is listed among the folders; it is an entry, not walked.
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            dirnames[:] = [d for d in dirnames if d not in links]
            for name in [*filenames, *links]:
                full = os.path.join(dirpath, name)
                rel = Path(full).relative_to(self.workspace).as_posix()
                info = os.lstat(full)
                target = os.readlink(full) if stat.S_ISLNK(info.st_mode) else ""
                why = unsealable(rel, _KINDS.get(stat.S_IFMT(info.st_mode), ""), target) if sealing else None
                if why:
                    refused.append(why)
                elif stat.S_ISLNK(info.st_mode):
                    tree[rel] = FileEntry.symlink(target)
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
                    if max_bytes is not None and total > max_bytes:
                        raise SandboxError(f"the workspace {self.workspace} holds more than {max_bytes} bytes of files")
                    tree[rel] = FileEntry(normalise_mode(info.st_mode), Path(full).read_bytes())
        if refused:
            raise SandboxError(f"the workspace {self.workspace} holds what sealing cannot carry: "
                               + "; ".join(refused[:5]))
        return dict(sorted(tree.items()))

    # -- the harness's own access --------------------------------------------------
    def stop(self) -> None:
        """Nothing outlives a command here: its PID namespace ends with it."""

    def put_harness_tree(self, tree: Tree, *, at: str = WORKDIR, owner: str = "root") -> None:
        if at.rstrip("/") == WORKDIR:
            self.put_tree(tree)
            self._readonly_workspace = owner == "root"
            return
        host = self._harness_dirs.get(at, (None, False))[0]
        if host is None:
            host = tempfile.mkdtemp(prefix=f"{self.workspace.name}-harness-")
            self._harness_dirs[at] = (host, owner != "root")
            self._harness_hosts.append(host)
        for path, entry in sorted(tree.items()):
            target = Path(host) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if entry.link:
                os.symlink(entry.link, target)
            else:
                target.write_bytes(entry.data)
                target.chmod(normalise_mode(entry.mode))
                os.utime(target, (FROZEN_ATIME, FIXED_MTIME))
        _freeze_folders(Path(host), tree)

    def _host_of(self, path: str) -> Path:
        if path == WORKDIR or path.startswith(WORKDIR + "/"):
            return self.workspace / path[len(WORKDIR):].lstrip("/")
        for inside, (host, _) in self._harness_dirs.items():
            if path.startswith(inside.rstrip("/") + "/"):
                return Path(host) / path[len(inside.rstrip("/")):].lstrip("/")
        raise FileNotFoundError(f"{path} is not a place the harness keeps in the local sandbox")

    def read_folder(self, path: str, *, max_bytes: int) -> Tree:
        host = self._host_of(path)
        if not host.is_dir():
            raise FileNotFoundError(f"{path} is not a folder in the sandbox")
        tree: Tree = {}
        total = 0
        for file in sorted(p for p in host.rglob("*") if p.is_file() and not p.is_symlink()):
            total += file.stat().st_size
            if total > max_bytes:
                raise FolderTooLarge(f"{path} holds more than {max_bytes} bytes")
            tree[file.relative_to(host).as_posix()] = FileEntry(normalise_mode(file.stat().st_mode), file.read_bytes())
        return tree

    def read_path(self, path: str, *, max_bytes: int) -> bytes:
        host = self._host_of(path)
        if host.is_symlink() or not host.is_file():
            raise FileNotFoundError(f"{path} is not a regular file in the sandbox")
        if host.stat().st_size > max_bytes:
            raise SandboxError(f"{path} is larger than {max_bytes} bytes")
        return host.read_bytes()

    # -- lifecycle ----------------------------------------------------------------
    def handle(self) -> LocalHandle:
        return LocalHandle(self.limits, workspace=str(self.workspace))

    @classmethod
    def attach(cls, handle: SandboxHandle, *, own: bool = False) -> LocalSandbox:
        """Reach an existing workspace. It is deleted by `close()` only when `own` is set."""
        if not isinstance(handle, LocalHandle):
            raise SandboxError(f"handle is for the {type(handle).__struct_config__.tag!r} backend, not local")
        self = cls.__new__(cls)
        self.limits = handle.limits
        self._bwrap = shutil.which("bwrap")
        if self._bwrap is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed: run `apt-get install -y bubblewrap`")
        self.workspace = Path(handle.workspace)
        if not self.workspace.is_dir():
            raise SandboxError(f"sandbox workspace {self.workspace} is gone")
        self.bwrap_version = ""
        self._readonly_workspace, self._harness_hosts, self._harness_dirs = False, [], {}
        self._finalizer = weakref.finalize(self, _remove_dir, str(self.workspace), os.getpid()) if own else None
        return self

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
            for host in getattr(self, "_harness_hosts", []):
                _remove_dir(host, os.getpid())

    def describe(self) -> dict[str, str]:
        return {"backend": self.backend, "bwrap": self.bwrap_version}
