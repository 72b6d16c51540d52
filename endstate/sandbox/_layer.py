"""Sealing what an agent changed outside /workspace: its container's writable layer.

A task that declares `[seal] paths` (absolute folders or files: what matters) and
optionally `ignore` has its end state read from two places once the agent's container is
stopped: the workspace, as for every task, and the paths of the container's writable layer
(what `docker diff` lists: added, changed and deleted) that fall under `paths` and under
none of `ignore` or of endstate's own folders. The change is kept as files (mode, owner,
link target, bytes) and deletions, hashed, and that hash joins the workspace's into the
tree hash the card reports. The grading container, made fresh from the task image, then
receives exactly that change (written as root, owners kept, deletions applied) before
anything held out is staged: nothing else of the agent's container reaches the verifier.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import re
import tarfile
from collections.abc import Collection
from typing import Any, NamedTuple

import msgspec

from endstate.errors import SandboxError
from endstate.sandbox._base import WORKDIR, Sandbox
from endstate.sandbox._runtime import HARNESS_PROGRAMS
from endstate.sandbox._services import Process, bound_writes, read_processes, release_writes, start_processes
from endstate.sandbox._tree import FileEntry, tree_hash

__all__ = ["ALWAYS_IGNORED", "HARNESS_PROGRAMS", "SealSpec", "SystemChange", "agent_processes", "apply_change",
           "bound_end_state", "combined_hash", "harness_path", "read_change", "release_end_state", "selected",
           "start_sealed"]

#: Never sealed, whatever a task lists: the kernel's and the engine's, endstate's own, the workspace
#: (sealed on its own) and the tmpfs folders (gone with the container).
#: The engine's init, and the loader's cache: it names the library every program loads, the harness's included (the
#: grading container keeps the image's).
ALWAYS_IGNORED = ("/proc", "/sys", "/dev", "/run", "/tmp", "/var/tmp", "/home/agent", WORKDIR, "/opt/endstate",
                  "/opt/endstate-verifier", "/logs", "/tests", "/.dockerenv", "/etc/ld.so.cache", "/usr/sbin/docker-init")


class SealSpec(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A task's `[seal]`: what the agent changes outside /workspace that is part of its end state
    (absolute paths: `paths` matter, `ignore` below them does not)."""

    paths: list[str] = []
    ignore: list[str] = []
    #: Whether the processes the agent left running are sealed too, and started again for grading
    #: (see _services): a Harbor task's verifier talks to the services its agent started.
    processes: bool = False

    def __post_init__(self) -> None:
        for path in [*self.paths, *self.ignore]:
            if not path.startswith("/"):
                raise ValueError(f"`seal` path {path!r} is not absolute: name it from / (e.g. /etc/nginx)")


class SystemChange(msgspec.Struct, frozen=True):
    """What the agent changed outside the workspace, under the task's sealed paths."""

    #: Absolute path -> the file or link left there.
    files: dict[str, FileEntry] = {}
    #: Absolute path -> (uid, gid) of each file.
    owners: dict[str, tuple[int, int]] = {}
    #: Absolute paths the agent deleted.
    deleted: list[str] = []
    #: The processes it left running, for a task that seals them (sorted, no pid).
    processes: list[Process] = []
    #: Absolute path -> (mode, uid, gid) of each folder it made.
    folders: dict[str, tuple[int, int, int]] = {}

    @property
    def empty(self) -> bool:
        return not self.files and not self.deleted and not self.folders and not self.processes

    def hash(self) -> str:
        """sha256 over the files (as the workspace's tree hash counts them), their owners and the deletions."""
        digest = hashlib.sha256(tree_hash(self.files).encode() + b"\0")
        for path in sorted(self.files):  # the tree hash keeps only "executable or not": here the whole mode
            uid, gid = self.owners.get(path, (0, 0))
            digest.update(f"{path}\0{self.files[path].mode:o} {uid}:{gid}\0".encode("utf-8", "surrogateescape"))
        for path in sorted(self.deleted):
            digest.update(b"deleted\0" + path.encode("utf-8", "surrogateescape") + b"\0")
        for path, (mode, uid, gid) in sorted(self.folders.items()):  # none made: the hash is as it was
            digest.update(f"folder\0{path}\0{mode:o} {uid}:{gid}\0".encode("utf-8", "surrogateescape"))
        for process in self.processes:  # none for a task that does not seal them: the hash is as it was
            digest.update(b"process\0" + msgspec.json.encode(process) + b"\0")
        return digest.hexdigest()

    def listing(self) -> str:
        """One line per sealed path: `A path` (written) or `D path` (deleted), sorted."""
        lines = [f"A {path}" for path in [*self.files, *(f + "/" for f in self.folders)]] \
            + [f"D {path}" for path in self.deleted]
        return "".join(line + "\n" for line in [*sorted(lines, key=lambda line: line[2:]),
                                                 *(p.line() for p in self.processes)])


def combined_hash(workspace_hash: str, change: SystemChange) -> str:
    """The tree hash of an end state with a sealed system change: the workspace's and the change's, together."""
    return hashlib.sha256(f"workspace:{workspace_hash}\nsystem:{change.hash()}\n".encode()).hexdigest()


def _under(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == root.rstrip("/") or path.startswith(root.rstrip("/") + "/") or root == "/" for root in roots)


def _endstates(path: str) -> bool:
    """Under /opt/endstate or a folder of endstate's beside it (/opt/endstate-toolbox, -verifier)."""
    return path == "/opt/endstate" or path.startswith(("/opt/endstate/", "/opt/endstate-"))


def selected(path: str, paths: list[str], ignore: list[str]) -> bool:
    """Whether a changed path is sealed: under one of `paths`, under none of `ignore` or ALWAYS_IGNORED."""
    return _under(path, paths) and not _under(path, ignore) and not _under(path, ALWAYS_IGNORED) \
        and not _endstates(path) and not _harness_bytecode(path)


def _harness_bytecode(path: str) -> bool:
    """Python's compiled standard library (or endstate's): the harness's own `python3 -I` writes it
    where it may, and it is never sealed (a planted one would run in the harness): the image's stays."""
    return "/__pycache__/" in path and (_endstates(path) or _STDLIB.match(path) is not None)


#: The folders the harness's programs are found in (by PATH), and what the harness runs in a
#: grading container as root: the command server and seccomp wrapper (`python3 -I -S`, its
#: standard library), the runner (bash and coreutils), `setpriv`, `tar`.
_BIN = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")
#: What glibc reads by a fixed path whatever the program (the runtime's too, see _runtime): the preload
#: list every loader reads, and the name service's modules, which a user lookup dlopens from the image.
_LOADER = ("/etc/ld.so.preload", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf")
_LIBS = ("/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib")
_STDLIB = re.compile(r"/(usr/|usr/local/)?lib/python3\.\d+(/|$)")


class ImageEnvironment(NamedTuple):
    """What the task image's environment (its ENV, which every `docker exec` inherits, the verifier's
    last among them) makes a program read before anything of its own: the folders its PATH searches,
    the files bash (`BASH_ENV`, run before a script's first line) and the loader (`LD_PRELOAD`) run,
    and the folders the loader takes libraries from first (`LD_LIBRARY_PATH`)."""

    path: tuple[str, ...] = ()
    startup: tuple[str, ...] = ()
    libraries: tuple[str, ...] = ()

    @classmethod
    def of(cls, env: list[str]) -> "ImageEnvironment":
        """From a container's `NAME=value` list; relative entries (the working folder's) are left out."""
        values = dict(word.split("=", 1) for word in env if "=" in word)

        def absolute(name: str, sep: str = "") -> tuple[str, ...]:
            words = re.split(sep, values.get(name, "")) if sep else [values.get(name, "")]
            return tuple(posixpath.normpath(word) for word in words if word.startswith("/"))

        return cls(absolute("PATH", ":"), absolute("BASH_ENV") + absolute("LD_PRELOAD", "[: ]"),
                   absolute("LD_LIBRARY_PATH", ":"))


def harness_path(path: str, added: bool, image: ImageEnvironment = ImageEnvironment()) -> bool:
    """Whether a change at `path` (`added`: a file that was not there before) could reach what the
    harness runs as root in the grading container, or where it stages and reads: endstate's folders,
    /logs, /tests, the dynamic loader's configuration, a program the harness runs (a `python3` or
    `bash` put first on PATH included, the `image` PATH's folders too, where the verifier's `bash` is
    found), what the image's environment has every such program run first (`image`: the `BASH_ENV`
    file the verifier's bash runs before its script, a library it preloads or finds first), Python's
    standard library, or a shared library the image had."""
    folder, name = posixpath.split(path)
    if _harness_bytecode(path):
        return False
    if _endstates(path) or _under(path, ("/logs", "/tests")) or _under(path, _LOADER) or path in image.startup:
        return True
    if (folder in _BIN or folder in image.path) and (name in HARNESS_PROGRAMS or re.fullmatch(r"python3(\.\d+)?", name)):
        return True
    if folder in image.libraries and re.search(r"\.so(\.[\d.]+)?$", name) is not None:
        return True
    if _STDLIB.match(path) and not re.search(r"/(site|dist)-packages(/|$)", path):
        return True
    return not added and _under(path, _LIBS) and re.search(r"\.so(\.[\d.]+)?$", name) is not None


def _folder(stream: Any) -> tuple[int, int, int]:
    """(mode, uid, gid) of the folder an engine archive of it starts with (the rest is not read)."""
    head = b""
    for chunk in stream:
        head += chunk
        if len(head) >= 64 * 1024:
            break
    try:
        member = tarfile.open(fileobj=io.BytesIO(head), mode="r|").next()
    except (tarfile.TarError, EOFError):
        member = None
    return (member.mode & 0o7777, member.uid, member.gid) if member is not None else (0o755, 0, 0)


def _tampered(changes: list[dict], image: ImageEnvironment = ImageEnvironment()) -> list[str]:
    """The paths of `docker diff` output that `harness_path` names: each leaf of it (a folder is listed
    as changed when what it holds changed, so only what has nothing listed below it counts)."""
    paths = sorted(posixpath.normpath(c["Path"]) for c in changes)
    kinds = {posixpath.normpath(c["Path"]): c["Kind"] for c in changes}
    leaves = [p for i, p in enumerate(paths) if not (i + 1 < len(paths) and paths[i + 1].startswith(p.rstrip("/") + "/"))]
    return [p for p in leaves if harness_path(p, kinds[p] == 1, image)]


def _image_environment(client: Any, container: str) -> ImageEnvironment:
    """The environment a `docker exec` in a container of this image inherits (the image's ENV)."""
    try:
        env = client.api.inspect_container(container).get("Config", {}).get("Env") or []
    except Exception as exc:  # noqa: BLE001 - the engine's error, named
        raise SandboxError(f"could not read the environment of container {container[:12]}: {exc}") from None
    return ImageEnvironment.of([word for word in env if isinstance(word, str)])


def _is_folder(client: Any, container: str, path: str) -> bool:
    try:
        stream, stat = client.api.get_archive(container, path)
    except Exception:  # noqa: BLE001 - gone, or unreadable: not known to be a folder
        return False
    close = getattr(stream, "close", None)
    if close is not None:
        close()
    mode = int(stat.get("mode", 0))
    return bool(mode & (1 << 31)) and not mode & (1 << 27)  # a folder, not a link to one


def _container(box: Sandbox) -> tuple[Any, str]:
    inner = getattr(box, "inner", box)  # a TimedSandbox wraps the real one
    client, container = getattr(inner, "_client", None), getattr(inner, "container_id", None)
    if client is None or container is None:
        raise SandboxError(f"sealing paths outside {WORKDIR} reads a Docker container's writable layer: "
                           "run this task with --sandbox docker")
    return client, container


def read_change(stopped: Sandbox, paths: list[str], ignore: list[str], *, max_bytes: int,
                processes: list[Process] | None = None) -> SystemChange:
    """The sealed change of a stopped agent container (see the module docstring), with the `processes`
    read before it stopped. SandboxError when it holds more than `max_bytes`, touched what the harness
    runs (tampering), or the engine cannot read it."""
    client, container = _container(stopped)
    try:
        changes = client.api.diff(container) or []
    except Exception as exc:  # noqa: BLE001 - the engine's error, named
        raise SandboxError(f"could not list what changed in container {container[:12]}: {exc}") from None
    files: dict[str, FileEntry] = {}
    owners: dict[str, tuple[int, int]] = {}
    deleted: list[str] = []
    folders: dict[str, tuple[int, int, int]] = {}
    total = 0
    # A folder under /logs that holds nothing changed (made or chmod'ed by the image's own ENTRYPOINT, as
    # Harbor's images do for /logs/verifier) carries nothing: /logs is never sealed, the grading container
    # makes its reward folder anew. A file or a link there is still the end state's tampering.
    touched = [path for path in _tampered(changes, _image_environment(client, container)) if not (_under(path, ("/logs",)) and _is_folder(client, container,
                                                                                                    path))]
    if touched:
        raise SandboxError(f"the end state changed {', '.join(touched[:3])}{' ...' if len(touched) > 3 else ''}, "
                           "which the harness runs or reads in the grading container: tampering, never sealed")
    for change in sorted(changes, key=lambda c: c["Path"]):
        path = posixpath.normpath(change["Path"])
        if not selected(path, paths, ignore):
            continue
        if change["Kind"] == 2:
            if not any(path.startswith(gone + "/") for gone in deleted):  # a deleted folder covers what it held
                deleted.append(path)
            continue
        try:
            stream, stat = client.api.get_archive(container, path)
        except Exception as exc:  # noqa: BLE001 - listed a moment ago: the engine failed
            raise SandboxError(f"could not read {path} in container {container[:12]}: {exc}") from None
        if stat.get("mode", 0) & (1 << 31):  # a folder: docker diff lists what changed in it one by one
            if change["Kind"] == 1:  # a new one is kept itself too (mode, owner), empty or not
                folders[path] = _folder(stream)
            else:
                for _ in stream:
                    pass
            continue
        if total + int(stat.get("size", 0)) > max_bytes:  # refused before its bytes are read
            raise SandboxError(f"what the agent changed under {', '.join(paths)} holds more than {max_bytes} bytes")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.next()
            if member is None:
                continue
            if member.issym():
                files[path] = FileEntry.symlink(member.linkname)
            elif member.isfile():
                total += member.size
                if total > max_bytes:
                    raise SandboxError(f"what the agent changed under {', '.join(paths)} holds more than "
                                       f"{max_bytes} bytes")
                files[path] = FileEntry(member.mode & 0o7777, tar.extractfile(member).read())
            else:
                raise SandboxError(f"{path} is a {'hard link' if member.islnk() else 'special file'}: "
                                   "a sealed path holds files and symbolic links only")
            owners[path] = (member.uid, member.gid)
    return SystemChange(files=files, owners=owners, deleted=deleted, processes=list(processes or []),
                        folders=folders)


def _exec(client: Any, container: str, argv: list[str], user: str) -> tuple[int, str]:
    made = client.api.exec_create(container, argv, user=user)
    output = client.api.exec_start(made["Id"])
    return client.api.exec_inspect(made["Id"]).get("ExitCode", 1), output.decode("utf-8", errors="replace")


def agent_processes(live: Sandbox, secrets: Collection[str] = ()) -> list[Process]:
    """The processes the agent left running in its (still running) container, no variable holding
    one of `secrets` in their environments: see _services."""
    return read_processes(*_container(live), secrets)


def start_sealed(grading: Sandbox, processes: list[Process], staged: Collection[str] | None = (), *,
                 bound: bool = False) -> list[str]:
    """Start the sealed `processes` again in the grading container (see _services), walled, the folders
    `staged` hidden from them too (None: unwalled, the mutation check's mutant); one line for each that
    could not be. `bound`: `bound_end_state` first, in the same exec (one engine call fewer)."""
    if not processes:
        if bound:
            bound_end_state(grading)
        return []
    return start_processes(*_container(grading), processes, None if staged is None else list(staged),
                           grading.limits.workspace_mb * 1024 * 1024 if bound else 0)


def bound_end_state(grading: Sandbox) -> None:
    """A root end state's grading container: every write to its own filesystem, by its verifier or its
    services, lands in one tmpfs of the workspace's ceiling, never on the host's disk (see _services)."""
    bound_writes(*_container(grading), grading.limits.workspace_mb * 1024 * 1024)


def release_end_state(grading: Sandbox) -> None:
    """`bound_end_state` undone, once its verifier has run."""
    release_writes(*_container(grading))


def apply_change(grading: Sandbox, change: SystemChange) -> None:
    """Give a fresh grading container exactly `change`: deletions first, then the files, as root
    with their owners and modes (folders above a new file are made root's)."""
    if not change.files and not change.deleted and not change.folders:
        return
    client, container = _container(grading)
    for path in change.deleted:
        # As the owner of the folder it is in: root here may not write a folder it does not own.
        code, owner = _exec(client, container, ["stat", "-c", "%u:%g", posixpath.dirname(path)], "root")
        code = _exec(client, container, ["rm", "-rf", "--", path], owner.strip() if code == 0 else "root")[0]
        if code != 0:
            raise SandboxError(f"could not delete {path} in the grading container")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, (mode, uid, gid) in sorted(change.folders.items()):  # before what they hold
            info = tarfile.TarInfo(path.lstrip("/"))
            info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, mode, uid, gid, 0
            tar.addfile(info)
        for path, entry in sorted(change.files.items()):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.uid, info.gid = change.owners.get(path, (0, 0))
            info.mtime = 0
            if entry.link:
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, entry.link, 0o777
                tar.addfile(info)
            else:
                info.size, info.mode = len(entry.data), entry.mode
                tar.addfile(info, io.BytesIO(entry.data))
    try:
        client.api.put_archive(container, "/", buffer.getvalue())
    except Exception as exc:  # noqa: BLE001 - the engine's error, named
        raise SandboxError(f"could not write the sealed change into the grading container: {exc}") from None
