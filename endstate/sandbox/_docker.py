"""The Docker backend: one disposable container per sandbox.

The container's first process (`first_process`: one that reaps orphans, so zombies
never eat the pids limit, is above it or is it) reads its standard input until end of file.
The process that made the sandbox holds that stream open; when it dies, even by
SIGKILL, the engine closes the stream and the container stops by itself. It is
not removed then (its workspace can still be read from the stopped container):
the next endstate command removes it (see `_reaper`).

/tmp, /var/tmp, /dev/shm, /run/lock and /home/agent are tmpfs of a fixed size. Each
process that uses the sandbox opens one stream into it (`_channel`: one `docker exec`
of a small root server); every command and file tool is then a request on that stream,
not an exec of its own. A command runs in a small root shell, the *runner*; the file tools run as the agent
user (see `_scripts`, which holds both).

The container keeps only SETUID and SETGID (for `setpriv`) and runs with
no-new-privileges, so the agent user cannot become root again.

Every container has a network namespace of its own (loopback only unless the network is
on): a grading container never joins its agent's, since what a namespace holds (a port's
TIME_WAIT, an abstract socket name, a routing entry) outlives the process that made it.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import secrets
import signal
import time
import weakref
from collections.abc import Callable
from typing import Any

import docker
import docker.errors

from endstate.errors import (
    CommandWedged,
    ContainerGone,
    FolderTooLarge,
    SandboxError,
    SandboxUnavailable,
    WorkspaceFull,
)
from endstate.sandbox._base import (
    HOSTNAME,
    SANDBOX_ENV,
    WORKDIR,
    DockerHandle,
    ExecResult,
    Sandbox,
    SandboxHandle,
    SandboxLimits,
    output_text,
)
from endstate.sandbox._bounded import BoundedFolders
from endstate.sandbox._channel import Channel, ChannelBroken, ChannelStalled
from endstate.sandbox._engine import ChunkReader, freeze, remove_container, shared_client, still_running, why
from endstate.sandbox._files import DockerFileTools, _inside
from endstate.sandbox._reaper import owner_labels
from endstate.sandbox._runtime import RUNTIME, RuntimeGuards, runtime_python, runtime_volume
from endstate.sandbox._scripts import (
    _BACKSTOP_S,
    _MIB,
    _RUNNER,
    _TAR_FOLDER,
    _TAR_SLACK,
    _UNTAR_AS_AGENT,
    _UNTAR_AS_ROOT,
    AGENT_UID,
    RESTRICT,
    ROOT_AGENT_CAPS,
    ROOT_AGENT_ENV,
    first_process,
    parse_status,
)
from endstate.sandbox._services import stopped_among
from endstate.sandbox._tree import (
    ROOT_OWNERS,
    Tree,
    TreeRefused,
    TreeTooLarge,
    folders_above,
    harness_tar,
    tar_to_tree,
    tree_to_tar,
)

__all__ = ["DockerSandbox"]

#: Off: every archive goes through the engine (what the in-sandbox tar must match, see the tests).
_IN_SANDBOX_TAR = True
#: Times a container that lost its command runner is asked again while it still reads "running" (0.2 s apart).
_SETTLE_TRIES = 10


#: The harness's runtime volume this process found ((pid, blind) -> name): looked up once, not per grading
#: container (three engine round trips). It is named by the runtime image's id and nothing removes
#: it while a run lasts (removing a container leaves named volumes alone).
_RUNTIME_VOLUME: dict[tuple[int, bool], str] = {}


def _runtime_volume(client: docker.DockerClient, blind: bool = True) -> str:
    name = _RUNTIME_VOLUME.get((os.getpid(), blind))
    if name is None:
        name = _RUNTIME_VOLUME[(os.getpid(), blind)] = runtime_volume(client, blind=blind)
    return name


def _remove(client: docker.DockerClient, container_id: str, owner_pid: int, lifeline: Any = None) -> None:
    if os.getpid() != owner_pid:
        return  # a forked child exiting must not take its parent's container along
    if lifeline is not None:
        lifeline.close()
    remove_container(client, container_id)


class DockerSandbox(DockerFileTools, BoundedFolders, Sandbox):
    backend = "docker"

    def __init__(self, image: str, limits: SandboxLimits | None = None, name_hint: str = "task",
                 *, run_id: str = "", grading: bool = False, runtime: RuntimeGuards = RuntimeGuards()) -> None:
        self.limits = limits or SandboxLimits()
        self._grading = grading
        self._runtime = runtime
        # Who commands run as: the agent; grading, the test user (1000), or root for a root agent's task.
        self._agent_uid = self.limits.agent_uid if self.limits.agent_uid == 0 or not grading else AGENT_UID
        self.image = image
        self._client = shared_client()
        self._lifeline: Any = None
        self._open_channel: Channel | None = None
        self._finalizer: weakref.finalize | None = None
        self._start(name_hint, run_id)
        # The image the container was made from, as the engine's inspect of it (which making it
        # fetched) says: no lookup of its own, and no tag moved between a lookup and the create.
        self.image_id = self._container.attrs["Image"]

    def _start(self, name_hint: str, run_id: str) -> None:
        name = "endstate-" + re.sub(r"[^a-zA-Z0-9_.-]+", "-", name_hint)[:40] + "-" + secrets.token_hex(4)
        tmp = f"size={self.limits.tmp_mb}m,nosuid,nodev"
        command, init = first_process(self._agent_uid, runtime=self._grading)
        # A grading container runs the harness from a runtime of its own, never from the image (see _runtime).
        volume = _runtime_volume(self._client, self._runtime.blind_config) if self._grading else ""
        mounts = [docker.types.Mount(RUNTIME, volume, type="volume", read_only=True)] \
            if self._grading else []
        try:
            self._container = self._create(command, init, name, tmp, mounts, run_id)
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"Docker image {self.image} does not exist here: run `endstate image build` first"
            ) from None
        # From here on the container exists: make sure it goes away whatever happens,
        # including interpreter exit without close() (KeyboardInterrupt, forgotten with).
        self._finalizer = None
        try:
            # Attached before the start, so there is no moment when the container runs unheld.
            self._lifeline = self._client.api.attach_socket(self._container.id, params={"stdin": 1, "stream": 1})
            self._finalizer = weakref.finalize(self, _remove, self._client, self._container.id, os.getpid(),
                                               self._lifeline)
            self._container.start()
        except BaseException:
            if self._finalizer is None:
                _remove(self._client, self._container.id, os.getpid(), self._lifeline)
            self.close()
            raise

    def _create(self, command: list[str], init: bool, name: str, tmp: str, mounts: list[Any], run_id: str) -> Any:
        return self._client.containers.create(
            self.image, command, name=name, init=init,
            user="root",
            stdin_open=True,  # with detach off, docker-py sets StdinOnce: one client's hang-up ends the input
            tmpfs={"/tmp": f"{tmp},mode=1777", "/var/tmp": f"{tmp},mode=1777", "/run/lock": "size=1m,mode=1777",
                   "/home/agent": f"{tmp},mode=0755,uid={self._agent_uid},gid={self._agent_uid}"},
            shm_size=f"{self.limits.tmp_mb}m",
            hostname=HOSTNAME,
            environment=SANDBOX_ENV if self._agent_uid else ROOT_AGENT_ENV,
            working_dir=WORKDIR,
            network_mode="bridge" if self.limits.network and not self._grading else "none",  # grading: never
            mem_limit=f"{self.limits.memory_mb}m",
            memswap_limit=f"{self.limits.memory_mb}m",
            pids_limit=self.limits.pids,
            nano_cpus=int(self.limits.cpus * 1e9),
            cap_drop=["ALL"],
            # A grading container's root also gets CHOWN and FOWNER: it unpacks the staged, root-owned
            # tree and the agent-owned report folder itself (see `put_harness_trees`). Neither lets
            # root read or write a file its mode refuses (that is DAC_OVERRIDE). It gets SYS_ADMIN and
            # NET_ADMIN to give each process of the end state namespaces of its own (grading/harness/
            # endstate_isolate.py, which also takes back from that process every system call the
            # engine's seccomp profile opens for SYS_ADMIN). Tests there run as the agent user under
            # no-new-privileges, like the agent, and never hold any of them.
            cap_add=list(dict.fromkeys(["SETUID", "SETGID", *(["CHOWN", "FOWNER", "SYS_ADMIN", "NET_ADMIN"] if self._grading else []),
                                        *(ROOT_AGENT_CAPS if self._agent_uid == 0 else [])])),  # bounded by the runner
            security_opt=["no-new-privileges"],
            labels=owner_labels(run_id or secrets.token_hex(8)),
            mounts=mounts,
        )

    @property
    def container_id(self) -> str:
        return self._container.id

    # -- commands -----------------------------------------------------------------
    def exec(self, command: str, *, timeout: float | None = None) -> ExecResult:
        return self.exec_wrapped(command, [], timeout=timeout)

    def exec_wrapped(self, command: str, wrapper: list[str], *, timeout: float | None = None) -> ExecResult:
        """In a grading container, `wrapper` (a program of the harness's own, as root, which installs
        RESTRICT's filter itself) starts the command's user process, and without one RESTRICT does:
        no command there runs without the filter. Anywhere else the same as `exec`."""
        if self._grading:
            return self._exec(command, timeout, wrapper or runtime_python("-c", RESTRICT))
        return self._exec(command, timeout, [])

    def _exec(self, command: str, timeout: float | None, wrapper: list[str]) -> ExecResult:
        limit = self.limits.command_timeout_s if timeout is None else timeout
        nonce = secrets.token_hex(16)
        started = time.monotonic()
        request = {"op": "run", "cwd": WORKDIR, "env": {"ENDSTATE_NONCE": nonce, "ENDSTATE_AGENT_UID": str(self._agent_uid)},
                   "argv": ["bash", "-c", _RUNNER, "endstate", str(self.limits.output_cap_bytes), str(round(limit * 1000)),
                            str(self.limits.file_mb * 1024), str(self.limits.workspace_mb * _MIB), command, *wrapper]}
        channel = self._channel()
        try:
            _, stdout, stderr = channel.request(request, deadline=started + limit + _BACKSTOP_S)
        except ChannelBroken as exc:
            stalled = isinstance(exc, ChannelStalled)
            if self._agent_uid == 0 and not self._grading and self._state() == "running":
                # A root agent killed or stopped the harness's server (`pkill python3`, `kill -STOP`): that command
                # fails, the next reopens it (a stopped one is left as the agent left it, its stream let go).
                channel.close()
                return ExecResult(137, "", f"[endstate: the command {'stopped' if stalled else 'killed'} the "
                                  "harness's command runner]\n", duration_s=round(time.monotonic() - started, 3))
            if time.monotonic() < started + limit + _BACKSTOP_S and not stalled:
                raise self._runner_lost(f"command runner in container {self._container.short_id} died ({exc}; "
                                        "container state: {state}); the sandbox is unusable") from None
            # The in-container watchdog should have ended the command long ago. A grading container is
            # frozen first, so what its processes did (a service that stopped the runner) is what is seen.
            frozen = self._grading and freeze(self._container)
            running = still_running(self._container)
            try:
                self._container.kill()
            except docker.errors.APIError:
                pass  # already stopped or gone: either way it runs nothing now
            wedged = CommandWedged(
                f"command in container {self._container.short_id} " + (
                    f"can never return: {exc}" if stalled else
                    f"outlived its deadline by {_BACKSTOP_S:.0f}s ({exc})") + f"; the container was killed{running}"
            )
            wedged.frozen = running if frozen else None
            raise wedged from None
        duration = time.monotonic() - started

        marker = b"\n" + nonce.encode()
        out_data, _, out_tail = stdout.partition(marker)
        err_data, _, err_tail = stderr.partition(marker)
        status = parse_status(out_tail, err_tail)
        if status is None:
            raise self._runner_lost(f"command runner in container {self._container.short_id} died "
                                    "(container state: {state}); the sandbox is unusable")
        out_dropped, err_dropped, code, fired = status.out_dropped, status.err_dropped, status.exit_code, status.watchdog_fired
        used, oom_killed = status.workspace_bytes, status.oom_kills > 0
        ceiling = self.limits.workspace_mb * _MIB
        if status.disk_watch_fired or used > ceiling:
            raise WorkspaceFull(
                f"the workspace grew past its ceiling of {self.limits.workspace_mb} MiB "
                f"({max(used, ceiling + 1) / _MIB:.0f} MiB); every process of the agent was killed"
            )
        stderr = output_text(err_data, err_dropped)
        if oom_killed:
            stderr += "[endstate: killed: out of memory]\n"
        elif code == 128 + signal.SIGXFSZ:
            stderr += f"[endstate: killed: a file reached the size limit of {self.limits.file_mb} MiB]\n"
        return ExecResult(
            exit_code=124 if fired else code,
            stdout=output_text(out_data, out_dropped),
            stderr=stderr,
            timed_out=fired,
            truncated=bool(out_dropped or err_dropped),
            duration_s=round(duration, 3),
            oom_killed=oom_killed,
        )

    def _state(self) -> str:
        try:
            return self._client.api.inspect_container(self._container.id)["State"]["Status"]
        except docker.errors.NotFound:
            return "removed"

    def _runner_lost(self, message: str) -> SandboxError:
        """The error of a command runner whose stream ended, `message` given the container's state.
        A container removed or stopped from outside is the machinery's fault (ContainerGone). The
        engine may still say "running" just after its runner was killed on the way to a removal
        (`docker rm -f`), so a running container is asked again for a moment before it is believed."""
        state = self._state()
        for _ in range(_SETTLE_TRIES):
            if state != "running":
                break
            time.sleep(0.2)
            state = self._state()
        gone = state in ("removed", "exited", "dead", "removing")
        return (ContainerGone if gone else SandboxError)(message.format(state=state))

    # -- files --------------------------------------------------------------------
    def _held_channel(self) -> Channel | None:
        """This process's channel into the container, if it holds one that still works."""
        channel = self._open_channel
        if channel is None or channel.broken or channel.pid != os.getpid():
            return None
        return channel

    def _watch(self, channel: Channel) -> Callable[[], str]:
        """What a request asks while it has no reply: whether the server or its runner is stopped."""
        def watch() -> str:
            seen = stopped_among(self._client.api, self._container.id, channel.server_pid())
            return f"the harness's command server or its runner is stopped ({seen})" if seen else ""
        return watch

    def _channel(self) -> Channel:
        """This process's open channel into the container, opened on first use."""
        channel = self._held_channel()
        if channel is None:
            try:
                channel = self._open_channel = Channel.open(self._client.api, self._container.id, runtime=self._grading,
                                                            container_env=self._container.attrs["Config"]["Env"],
                                                            guards=self._runtime)
            except docker.errors.NotFound:
                raise SandboxError(f"sandbox container {self._container.short_id} is gone") from None
            except docker.errors.APIError as exc:
                raise SandboxError(f"sandbox container {self._container.short_id} failed: {why(exc)}") from None
            if self._agent_uid == 0:
                # A root agent, or a root end state beside the harness in its grading container, can stop the server:
                # a request then never has a reply, which is seen within seconds, not at its deadline.
                channel.watch = self._watch(channel)
        return channel

    def ready(self) -> None:
        self._channel()

    def _agent_request(self, request: dict[str, Any], payload: bytes, *,
                       doing: str = "file tool") -> tuple[dict[str, Any], bytes, bytes]:
        deadline = time.monotonic() + self.limits.command_timeout_s + _BACKSTOP_S
        try:
            reply, stdout, stderr = self._channel().request(request, payload, deadline=deadline)
        except ChannelBroken as exc:
            raise self._runner_lost(f"{doing} in container {self._container.short_id} failed: {exc} "
                                    "(container state: {state})") from None
        return reply, stdout, stderr

    def put_tree(self, tree: Tree) -> None:
        self._put({posixpath.relpath(_inside(p), WORKDIR): entry for p, entry in tree.items()})

    def _put(self, tree: Tree) -> None:
        archive = tree_to_tar(tree, uid=AGENT_UID, gid=AGENT_UID)
        if not self._unpack(archive, _UNTAR_AS_AGENT):
            self._put_archive(WORKDIR, archive)

    def spawn_root(self, argv: list[str]) -> bool:
        """In a grading container whose channel is open: one request to its server, which
        starts `argv` detached from it (its streams on /dev/null) and answers at once."""
        if not self._grading or self._held_channel() is None:
            return False
        request = {"op": "run", "cwd": "/", "argv": ["bash", "-c", '"$@" </dev/null >/dev/null 2>&1 &', "endstate",
                                                    *argv]}
        reply, _, _ = self._agent_request(request, b"", doing="starting a harness program")
        return reply["code"] == 0

    def _unpack(self, archive: bytes, argv: list[str]) -> bool:
        """Unpack an archive through the channel (tar in the container): no engine round
        trip, and none of the engine's own unpacking, which re-executes the daemon for
        every archive. False when that tar refused (a folder the unpacking user may not
        write, say); the caller then gives the engine the same archive, and the engine's
        result stands: tar only writes what the archive holds, and the engine rewrites all of it.

        Only where this process already holds a channel: opening one (an exec) costs the
        engine about as much as unpacking does. A grading container opens its channel first
        thing (`ready`), and so does the agent process that writes a task's fixture; a
        process that never uses the sandbox otherwise leaves the unpacking to the engine."""
        if not _IN_SANDBOX_TAR or self._held_channel() is None:
            return False
        request = {"op": "run", "cwd": "/", "stdin": True, "argv": argv}
        reply, _, _ = self._agent_request(request, archive, doing="unpacking an archive")
        return reply["code"] == 0

    def _put_archive(self, at: str, archive: bytes) -> None:
        try:
            self._client.api.put_archive(self._container.id, at, archive)
        except docker.errors.APIError as exc:
            raise SandboxError(f"could not write into container {self._container.short_id}: {why(exc)}") from None

    def get_tree(self, *, max_bytes: int | None = None, sealing: bool = False) -> Tree:
        try:
            stream, _ = self._client.api.get_archive(self._container.id, WORKDIR)
            return tar_to_tree(ChunkReader(stream), strip=posixpath.basename(WORKDIR) + "/", max_bytes=max_bytes,
                               sealing=sealing)
        except TreeRefused as exc:
            raise SandboxError(f"the workspace of container {self._container.short_id} holds {exc}") from None
        except docker.errors.APIError as exc:
            raise SandboxError(f"could not read container {self._container.short_id}: {why(exc)}") from None
        except TreeTooLarge as exc:
            raise SandboxError(f"the workspace of container {self._container.short_id} holds {exc}") from None

    # -- the harness's own access (sealing and grading) ------------------------------
    def stop(self) -> None:
        """Kill every process in the container; its files stay readable (sealing reads them)."""
        if self._open_channel is not None:
            self._open_channel.close()
        try:
            self._client.api.kill(self._container.id)
        except docker.errors.NotFound:
            raise SandboxError(f"sandbox container {self._container.short_id} is gone") from None
        except docker.errors.APIError as exc:
            if "is not running" not in str(exc):
                raise SandboxError(f"could not stop container {self._container.short_id}: {why(exc)}") from None
        self._client.api.wait(self._container.id, timeout=30)

    def put_harness_tree(self, tree: Tree, *, at: str = WORKDIR, owner: str = "root") -> None:
        """Write files as the harness: root-owned (read-only to the agent user) or agent-owned,
        at `at` (an absolute folder). The folder itself gets the same owner; folders above
        it are made, root-owned, where missing."""
        self.put_harness_trees({at: (tree, owner)})

    def put_harness_trees(self, trees: dict[str, tuple[Tree, str]]) -> None:
        """All of them in one archive: in a grading container, unpacked by root through the
        channel; anywhere else (or if that fails), one engine call."""
        archive = harness_tar(trees, AGENT_UID)
        root_owned = [at for at, (_, owner) in trees.items() if owner in ROOT_OWNERS]
        argv = ["bash", "-c", _UNTAR_AS_ROOT, "endstate", *root_owned, "--", *trees, "--", *folders_above(trees)]
        if not (self._grading and self._unpack(archive, argv)):
            self._put_archive("/", archive)

    def read_folder(self, path: str, *, max_bytes: int) -> Tree:
        """Every file below an absolute folder, read as root inside the container through
        the channel: no engine round trip. Links stay links; a file root may not read is
        left out (the folder is the test process's to spoil, never to fake)."""
        parent, name = posixpath.split(path.rstrip("/"))
        request = {"op": "run", "cwd": "/", "argv": ["bash", "-c", _TAR_FOLDER, "endstate", parent or "/", name,
                                                    str(max_bytes + _TAR_SLACK + 1)]}
        deadline = time.monotonic() + self.limits.command_timeout_s + _BACKSTOP_S
        try:
            reply, archive, stderr = self._channel().request(request, deadline=deadline)
        except ChannelBroken as exc:
            raise self._runner_lost(f"reading {path} in container {self._container.short_id} failed: {exc} "
                                    "(container state: {state})") from None
        if reply["code"] == 44:
            raise FileNotFoundError(f"{path} does not exist in the sandbox")
        if len(archive) > max_bytes + _TAR_SLACK:
            raise FolderTooLarge(f"{path} in container {self._container.short_id} holds more than {max_bytes} bytes")
        if reply["code"] != 0:
            said = stderr.decode("utf-8", errors="replace").strip()
            raise SandboxError(f"{path} in container {self._container.short_id} could not be read: {said}")
        try:
            return tar_to_tree(io.BytesIO(archive), strip=name + "/", max_bytes=max_bytes)
        except TreeTooLarge:
            raise FolderTooLarge(f"{path} in container {self._container.short_id} holds more than {max_bytes} bytes") from None

    def read_path(self, path: str, *, max_bytes: int) -> bytes:
        """Bytes of any file in the container (a harness read, as root), at most `max_bytes`."""
        try:
            stream, _ = self._client.api.get_archive(self._container.id, path)
            tree = tar_to_tree(ChunkReader(stream), max_bytes=max_bytes)
        except docker.errors.NotFound:
            raise FileNotFoundError(f"{path} does not exist in the sandbox") from None
        except TreeTooLarge:
            raise SandboxError(f"{path} in container {self._container.short_id} is larger than {max_bytes} bytes") from None
        name = posixpath.basename(path)
        entry = tree.get(name)
        if entry is None or entry.link:
            raise FileNotFoundError(f"{path} is not a regular file in the sandbox")
        return entry.data

    # -- lifecycle ----------------------------------------------------------------
    def handle(self) -> DockerHandle:
        return DockerHandle(self.limits, container=self._container.id, image=self.image, image_id=self.image_id)

    @classmethod
    def attach(cls, handle: SandboxHandle, *, own: bool = False) -> DockerSandbox:
        """Reach an existing container. It is removed by `close()` only when `own` is set."""
        if not isinstance(handle, DockerHandle):
            raise SandboxError(f"handle is for the {type(handle).__struct_config__.tag!r} backend, not docker")
        self = cls.__new__(cls)
        self.limits = handle.limits
        self.image = handle.image
        self._client = shared_client()
        try:
            self._container = self._client.containers.get(handle.container)
        except docker.errors.NotFound:
            raise SandboxError(f"sandbox container {handle.container[:12]} is gone") from None
        self.image_id = handle.image_id or self._container.image.id
        self._finalizer = None
        self._open_channel = None
        self._runtime = RuntimeGuards()  # every guard on: only the process that made the container turns one off
        # made for grading (a root agent's container holds CHOWN too, never SYS_ADMIN)
        self._grading = "SYS_ADMIN" in (self._container.attrs["HostConfig"].get("CapAdd") or [])
        self._agent_uid = self.limits.agent_uid if self.limits.agent_uid == 0 or not self._grading else AGENT_UID
        if own:
            self._finalizer = weakref.finalize(self, _remove, self._client, self._container.id, os.getpid())
        return self

    def close(self) -> None:
        if self._open_channel is not None:
            self._open_channel.close()
        if self._finalizer is not None:
            self._finalizer()  # runs once; later calls do nothing

    def describe(self) -> dict[str, str]:
        return {"backend": self.backend, "image": self.image, "image_id": self.image_id}
