"""The Docker backend: one disposable container per sandbox.

The container's first process (under Docker's init, which reaps orphans so
zombies never eat the pids limit) reads its standard input until end of file.
The process that made the sandbox holds that stream open; when it dies, even by
SIGKILL, the engine closes the stream and the container stops by itself. It is
not removed then (its workspace can still be read from the stopped container):
the next endstate command removes it (see `_reaper`).

/tmp, /var/tmp, /dev/shm, /run/lock and /home/agent are tmpfs of a fixed size. Each
process that uses the sandbox opens one stream into it (`_channel`: one `docker exec`
of a small root server); every command and file tool is then a request on that stream,
not an exec of its own. A command runs in a small root shell, the *runner*, which:

- starts the command as user `agent` (uid 1000) through `setpriv`;
- copies at most `output_cap_bytes` of each stream and counts the rest
  (`head -c`, then `wc -c`), so a flood never crosses the socket;
- arms a watchdog that, at the deadline, becomes the agent user and sends
  SIGKILL to every process that user owns (`kill -1`). It is forked before the
  command starts and only `exec`s afterwards, so it still fires when a fork bomb
  has used up the pids limit;
- limits the size of any file the command writes (`ulimit -f`), and watches
  the workspace's size while it runs (`du`, twice a second): past the ceiling
  every process of the agent user is killed and `exec` raises WorkspaceFull;
- notes whether the container's memory cgroup killed a process meanwhile (OOM);
- ends both streams with a trailer carrying a per-command nonce, which the
  agent cannot read (it travels in the root shell's environment), so the
  trailer cannot be forged from inside. The trailer also carries the
  workspace's size, measured after the command, at no extra round trip.

The file tools run as the agent user too (`read_file`, `write_file`, `edit_file`): they
see what the agent may see, and refuse any path that resolves out of the workspace. The
server does the plain case itself in a child that has become the agent user, and hands
every other case to the tool's shell script, which words the errors.

The container keeps only SETUID and SETGID (for `setpriv`) and runs with
no-new-privileges, so the agent user cannot become root again.

A grading container made `beside` its task's agent container shares that one's network
namespace (loopback only): the agent is killed before anything is staged there, and
nothing it bound outlives it.
"""

from __future__ import annotations

import io
import os
import posixpath
import tarfile
import re
import secrets
import signal
import time
import weakref
from typing import Any

import docker
import docker.errors
import msgspec

from endstate.errors import SandboxError, SandboxUnavailable, WorkspaceFull
from endstate.sandbox._channel import Channel, ChannelBroken
from endstate.sandbox._base import WORKDIR, ExecResult, Sandbox, SandboxLimits
from endstate.sandbox._reaper import LABEL, owner_labels
from endstate.sandbox._tree import FIXED_MTIME, Tree, TreeTooLarge, add_folder, add_tree, tar_to_tree, tree_to_tar

__all__ = [
    "DockerSandbox", "connect", "engine_answers", "engine_url", "output_text", "LABEL", "HOSTNAME", "SANDBOX_ENV",
]

AGENT_UID = 1000
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

#: How long past a command's own deadline we wait for the runner before deciding
#: the sandbox itself is broken.
_BACKSTOP_S = 30.0

# $1 = output cap in bytes, $2 = seconds allowed, $3 = largest file in 1 KiB blocks,
# $4 = workspace ceiling in bytes, $5 = the command.
# fd 5 is the exec's real stderr; the runner's own chatter goes to /dev/null.
_RUNNER = r"""
nonce=$ENDSTATE_NONCE; unset ENDSTATE_NONCE
cap=$1 limit=$2 fsize=$3 ceiling=$4 cmd=$5
exec 5>&2 2>/dev/null
oom_kills() {
  oom=0
  local file key value
  for file in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    [ -r "$file" ] || continue
    while read -r key value; do [ "$key" = oom_kill ] && oom=$value; done < "$file"
    return
  done
}
oom_kills; oom_before=$oom
capped() { head -c "$cap"; printf '\n%s %s\n' "$nonce" "$(wc -c)"; }
exec 3> >(capped); out=$!
exec 4> >(exec 3>&-; capped >&5); err=$!
(
  trap 'kill $nap; exit 0' TERM
  sleep "$limit" & nap=$!
  wait $nap
  exec setpriv --reuid=1000 --regid=1000 --clear-groups bash -c 'kill -s KILL -1; exit 99'
) </dev/null >/dev/null 3>&- 4>&- 5>&- &
watchdog=$!
(
  trap 'exit 0' TERM
  exec 6<> <(:)  # a pipe nobody writes to: `read -t` on it sleeps without forking
  while :; do
    read -t 0.5 -u 6
    used=0; read -r used _ < <(du -sxbl /workspace)
    if [ "${used:-0}" -gt "$ceiling" ]; then
      exec setpriv --reuid=1000 --regid=1000 --clear-groups bash -c 'kill -s KILL -1; exit 98'
    fi
  done
) </dev/null >/dev/null 3>&- 4>&- 5>&- &
diskwatch=$!
( ulimit -f "$fsize" && exec setpriv --reuid=1000 --regid=1000 --init-groups bash -c "$cmd" ) \
  </dev/null >&3 2>&4 3>&- 4>&- 5>&- &
wait $!; status=$?
exec 3>&- 4>&-
wait $out $err
kill -TERM $watchdog $diskwatch; wait $watchdog; fired=$?; wait $diskwatch; full=$?
used=0; read -r used _ < <(du -sxbl /workspace)
oom_kills
printf '%s status %s %s %s %s %s\n' "$nonce" "$status" "$fired" "$full" "$used" "$((oom - oom_before))" >&5
"""
_WATCHDOG_FIRED = 99
_DISK_WATCH_FIRED = 98
_MIB = 1024 * 1024

# Runs as the agent user. $1 = the workspace path asked for. Exit 3: it resolves out
# of the workspace; 4: it is a folder; 2: there is no such file. Otherwise cat's own.
#: Ends a file tool's output, so output the engine lost is told from an empty file.
_EOF = b"[endstate-eof-5c1e]"

_READ = r"""
real=$(realpath -e -- "$1") || exit 2
case $real in /workspace/*) ;; *) printf '%s' "$real" >&2; exit 3;; esac
[ -d "$real" ] && exit 4
cat -- "$real" || exit 5
printf '%s' "$ENDSTATE_EOF"
"""

# Runs as the agent user, the new bytes on stdin. $1 = the workspace path, $2 = the
# fixed mtime. Writes through a link that stays inside the workspace; a file that was
# executable stays so; a new file is 0644.
_WRITE = r"""
real=$(realpath -m -- "$1") || exit 2
case $real in /workspace/*) ;; *) printf '%s' "$real" >&2; exit 3;; esac
[ -d "$real" ] && exit 4
mode=644
[ -x "$real" ] && mode=755
mkdir -p -- "${real%/*}" && cat > "$real" && chmod "$mode" -- "$real" && touch -h -d "@$2" -- "$real" || exit 5
printf '%s %s' "$ENDSTATE_EOF" "$(stat -c %s -- "$real")"
"""


#: How the in-sandbox server runs a file tool's script as the agent user, and with what environment.
_AS_AGENT = ["setpriv", f"--reuid={AGENT_UID}", f"--regid={AGENT_UID}", "--init-groups"]
_AGENT_ENV = {**SANDBOX_ENV, "ENDSTATE_EOF": _EOF.decode()}
#: Off: every file tool runs its script (what the native path must match, see the tests).
_NATIVE_FILE_TOOLS = True


# Runs as root. $1/$2 = the folder, $3 = most bytes of archive to send. Exit 44: no such folder.
_TAR_FOLDER = r"""
[ -d "$1/$2" ] || exit 44
set -o pipefail
tar --create --ignore-failed-read --directory="$1" -- "$2" 2>/dev/null | head -c "$3"
"""
#: Unpacks an archive (standard input) into the workspace as the agent user: what it writes
#: is the agent's, modes as archived (`put_tree`).
_UNTAR_AS_AGENT = [*_AS_AGENT, "tar", "--extract", "--preserve-permissions", "--no-same-owner",
                   f"--directory={WORKDIR}", "--file=-"]

# Runs as root in a grading container (which grants root CHOWN and FOWNER), the archive
# on stdin; $@ = the folders the archive makes root-owned. Root may not write into a folder
# it does not own, and tar gives a folder its owner only after filling it: those folders
# are made root's first.
_UNTAR_AS_ROOT = r"""
for folder; do
  if [ -d "$folder" ] && [ ! -L "$folder" ]; then chown 0:0 -- "$folder" || exit 1; fi
done
exec tar --extract --preserve-permissions --same-owner --numeric-owner --directory=/ --file=-
"""

#: Off: every archive goes through the engine (what the in-sandbox tar must match, see the tests).
_IN_SANDBOX_TAR = True

#: Archive bytes allowed past a folder's content ceiling (headers and padding).
_TAR_SLACK = 4 * _MIB


def engine_url() -> str:
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


#: "<engine address> <API version>": what the first client of a process tree learnt, so that
#: later clients (every worker makes its own) skip asking. Asking is `GET /version`, for
#: which the engine runs `runc --version` and `docker-init --version` each time.
API_VERSION_ENV = "ENDSTATE_DOCKER_API"


def connect(timeout: float = 60.0) -> docker.DockerClient:
    """A client for the local engine, or SandboxUnavailable saying what to do."""
    url = engine_url()
    known_url, _, known_version = os.environ.get(API_VERSION_ENV, "").rpartition(" ")
    try:
        client = docker.from_env(timeout=timeout, version=known_version if known_url == url else None)
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxUnavailable(
            f"no Docker engine answers at {url}: start dockerd or use --sandbox local ({exc})"
        ) from None
    os.environ[API_VERSION_ENV] = f"{url} {client.api.api_version}"
    return client


#: Sandboxes of one process share one client (a client costs an engine round trip or two);
#: keyed by pid so that a forked child never uses its parent's connections.
_SHARED: dict[int, docker.DockerClient] = {}


def _shared_client() -> docker.DockerClient:
    client = _SHARED.get(os.getpid())
    if client is None:
        client = _SHARED[os.getpid()] = connect()
    return client


def engine_answers(timeout: float = 3.0) -> bool:
    try:
        connect(timeout).close()
    except SandboxUnavailable:
        return False
    return True


def _inside(path: str) -> str:
    """The absolute container path of a workspace-relative path; refuses escapes."""
    full = posixpath.normpath(posixpath.join(WORKDIR, path))
    if not full.startswith(WORKDIR + "/"):
        raise ValueError(f"path {path!r} is not inside the workspace")
    return full


def output_text(data: bytes, dropped: int) -> str:
    """Captured bytes as text, with a line saying how much was cut, if anything was."""
    text = data.decode("utf-8", errors="replace")
    if dropped:
        if text and not text.endswith("\n"):
            text += "\n"
        text += f"[endstate: output truncated: {dropped} bytes dropped]\n"
    return text


def _harness_tar(trees: dict[str, tuple[Tree, str]]) -> bytes:
    """One archive, unpacked at "/", holding each tree in its absolute folder: the folders
    above root-owned, the folder and its tree owned as asked (root or the agent user)."""
    buffer = io.BytesIO()
    made: set[str] = set()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for at, (tree, owner) in trees.items():
            name = at.strip("/")
            parts = name.split("/")
            for depth in range(1, len(parts)):
                above = "/".join(parts[:depth])
                if above not in made:
                    made.add(above)
                    add_folder(tar, above)
            uid = 0 if owner in ("root", "scratch") else AGENT_UID
            # A scratch tree's folders take new files from anyone, who may not touch root's (sticky).
            add_tree(tar, tree, prefix=name + "/", uid=uid, gid=uid, root_dir=name,
                     folder_mode=0o1777 if owner == "scratch" else 0o755)
    return buffer.getvalue()


class _ChunkReader(io.RawIOBase):
    """A file-like view of an iterator of byte chunks (Docker's archive stream)."""

    def __init__(self, chunks: Any) -> None:
        self._chunks = iter(chunks)
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


def _why(exc: docker.errors.APIError) -> str:
    return str(exc.explanation or exc)


def _remove(client: docker.DockerClient, container_id: str, owner_pid: int, lifeline: Any = None) -> None:
    if os.getpid() != owner_pid:
        return  # a forked child exiting must not take its parent's container along
    if lifeline is not None:
        lifeline.close()
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise


class DockerSandbox(Sandbox):
    backend = "docker"

    def __init__(self, image: str, limits: SandboxLimits | None = None, name_hint: str = "task",
                 *, run_id: str = "", grading: bool = False, beside: Sandbox | None = None) -> None:
        """`beside`: the agent's sandbox this one will grade. With the network off in both, it
        joins that container's network namespace (nothing but loopback) instead of having the
        engine make and set up one more (two runs of the daemon's binary per container). Its
        agent is killed before anything is graded, and what a killed process bound goes with it."""
        self.limits = limits or SandboxLimits()
        self._grading = grading
        self.image = image
        self._client = _shared_client()
        try:
            self.image_id = self._client.images.get(image).id
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"Docker image {image} does not exist here: run `endstate image build` first"
            ) from None
        self._lifeline: Any = None
        self._open_channel: Channel | None = None
        self._finalizer: weakref.finalize | None = None
        if isinstance(beside, DockerSandbox) and not (self.limits.network or beside.limits.network):
            try:
                self._start(name_hint, run_id, network_of=beside.container_id)
                return
            except docker.errors.APIError:
                pass  # that container is gone or stopped: a namespace of its own, like any sandbox
        self._start(name_hint, run_id)

    def _start(self, name_hint: str, run_id: str, *, network_of: str = "") -> None:
        name = "endstate-" + re.sub(r"[^a-zA-Z0-9_.-]+", "-", name_hint)[:40] + "-" + secrets.token_hex(4)
        tmp = f"size={self.limits.tmp_mb}m,nosuid,nodev"
        self._container = self._client.containers.create(
            self.image,
            ["cat"],  # ends at end of input: when the owner's stream closes (see the module docstring)
            name=name,
            init=True,
            user="root",
            stdin_open=True,  # with detach off, docker-py sets StdinOnce: one client's hang-up ends the input
            tmpfs={"/tmp": f"{tmp},mode=1777", "/var/tmp": f"{tmp},mode=1777", "/run/lock": "size=1m,mode=1777",
                   "/home/agent": f"{tmp},mode=0755,uid={AGENT_UID},gid={AGENT_UID}"},
            shm_size=f"{self.limits.tmp_mb}m",
            # A joined namespace comes with its container's host name (the same HOSTNAME); the
            # engine refuses a second one.
            hostname=None if network_of else HOSTNAME,
            environment=SANDBOX_ENV,
            working_dir=WORKDIR,
            network_mode=f"container:{network_of}" if network_of else "bridge" if self.limits.network else "none",
            mem_limit=f"{self.limits.memory_mb}m",
            memswap_limit=f"{self.limits.memory_mb}m",
            pids_limit=self.limits.pids,
            nano_cpus=int(self.limits.cpus * 1e9),
            cap_drop=["ALL"],
            # A grading container's root also gets CHOWN and FOWNER: it unpacks the staged, root-owned
            # tree and the agent-owned report folder itself (see `put_harness_trees`). Tests there
            # run as the agent user under no-new-privileges, like the agent, and never hold them.
            # Neither lets root read or write a file its mode refuses (that is DAC_OVERRIDE).
            cap_add=["SETUID", "SETGID", *(["CHOWN", "FOWNER"] if self._grading else [])],
            security_opt=["no-new-privileges"],
            labels=owner_labels(run_id or secrets.token_hex(8)),
        )
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

    @property
    def container_id(self) -> str:
        return self._container.id

    # -- commands -----------------------------------------------------------------
    def exec(self, command: str, *, timeout: float | None = None) -> ExecResult:
        limit = self.limits.command_timeout_s if timeout is None else timeout
        nonce = secrets.token_hex(16)
        started = time.monotonic()
        request = {"op": "run", "cwd": WORKDIR, "env": {"ENDSTATE_NONCE": nonce},
                   "argv": ["bash", "-c", _RUNNER, "endstate", str(self.limits.output_cap_bytes), f"{limit:.3f}",
                            str(self.limits.file_mb * 1024), str(self.limits.workspace_mb * _MIB), command]}
        channel = self._channel()
        try:
            _, stdout, stderr = channel.request(request, deadline=started + limit + _BACKSTOP_S)
        except ChannelBroken as exc:
            if time.monotonic() < started + limit + _BACKSTOP_S:
                raise SandboxError(
                    f"command runner in container {self._container.short_id} died ({exc}; container state: "
                    f"{self._state()}); the sandbox is unusable"
                ) from None
            # The in-container watchdog should have ended the command long ago.
            try:
                self._container.kill()
            except docker.errors.APIError:
                pass  # already stopped or gone: either way it runs nothing now
            raise SandboxError(
                f"command in container {self._container.short_id} outlived its deadline by "
                f"{_BACKSTOP_S:.0f}s ({exc}); the container was killed"
            ) from None
        duration = time.monotonic() - started

        marker = b"\n" + nonce.encode()
        out_data, _, out_tail = stdout.partition(marker)
        err_data, _, err_tail = stderr.partition(marker)
        # out_tail: " <dropped>\n"
        # err_tail: " <dropped>\n<nonce> status <code> <watchdog> <disk watch> <workspace bytes> <oom kills>\n"
        words = err_tail.split()
        if len(words) != 8 or len(out_tail.split()) != 1:
            raise SandboxError(
                f"command runner in container {self._container.short_id} died "
                f"(container state: {self._state()}); the sandbox is unusable"
            )
        out_dropped, err_dropped = int(out_tail.split()[0]), int(words[0])
        code, fired = int(words[3]), int(words[4]) == _WATCHDOG_FIRED
        used, oom_killed = int(words[6]), int(words[7]) > 0
        ceiling = self.limits.workspace_mb * _MIB
        if int(words[5]) == _DISK_WATCH_FIRED or used > ceiling:
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

    # -- files --------------------------------------------------------------------
    def _held_channel(self) -> Channel | None:
        """This process's channel into the container, if it holds one that still works."""
        channel = self._open_channel
        if channel is None or channel.broken or channel.pid != os.getpid():
            return None
        return channel

    def _channel(self) -> Channel:
        """This process's open channel into the container, opened on first use."""
        channel = self._held_channel()
        if channel is None:
            try:
                channel = self._open_channel = Channel.open(self._client.api, self._container.id)
            except docker.errors.NotFound:
                raise SandboxError(f"sandbox container {self._container.short_id} is gone") from None
            except docker.errors.APIError as exc:
                raise SandboxError(f"sandbox container {self._container.short_id} failed: {_why(exc)}") from None
        return channel

    def ready(self) -> None:
        self._channel()

    def _agent_request(self, request: dict[str, Any], payload: bytes, *,
                       doing: str = "file tool") -> tuple[dict[str, Any], bytes, bytes]:
        deadline = time.monotonic() + self.limits.command_timeout_s + _BACKSTOP_S
        try:
            reply, stdout, stderr = self._channel().request(request, payload, deadline=deadline)
        except ChannelBroken as exc:
            raise SandboxError(f"{doing} in container {self._container.short_id} failed: {exc} "
                               f"(container state: {self._state()})") from None
        return reply, stdout, stderr

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

    @staticmethod
    def _file_request(op: str, path: str) -> dict[str, Any]:
        """A file tool's request: the server does it natively as the agent user when the
        plain case holds, and otherwise runs the script (`_READ`, `_WRITE`), which words
        every error."""
        full = _inside(path)
        if op != "edit" and not _NATIVE_FILE_TOOLS:  # tests compare both ways
            return {"op": "run", "cwd": WORKDIR, "env": _AGENT_ENV, "stdin": op == "write",
                    "argv": [*_AS_AGENT, "bash", "-c", _READ if op == "read" else _WRITE, "endstate", full,
                             *([str(FIXED_MTIME)] if op == "write" else [])]}
        return {"op": op, "path": full, "uid": AGENT_UID, "mtime": FIXED_MTIME, "eof": _EOF.decode(),
                "cwd": WORKDIR, "env": _AGENT_ENV,
                "read": [*_AS_AGENT, "bash", "-c", _READ, "endstate", full],
                "write": [*_AS_AGENT, "bash", "-c", _WRITE, "endstate", full, str(FIXED_MTIME)]}

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

    def put_tree(self, tree: Tree) -> None:
        self._put({posixpath.relpath(_inside(p), WORKDIR): entry for p, entry in tree.items()})

    def _put(self, tree: Tree) -> None:
        archive = tree_to_tar(tree, uid=AGENT_UID, gid=AGENT_UID)
        if not self._unpack(archive, _UNTAR_AS_AGENT):
            self._put_archive(WORKDIR, archive)

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
            raise SandboxError(f"could not write into container {self._container.short_id}: {_why(exc)}") from None

    def get_tree(self, *, max_bytes: int | None = None) -> Tree:
        try:
            stream, _ = self._client.api.get_archive(self._container.id, WORKDIR)
            return tar_to_tree(_ChunkReader(stream), strip=posixpath.basename(WORKDIR) + "/", max_bytes=max_bytes)
        except docker.errors.APIError as exc:
            raise SandboxError(f"could not read container {self._container.short_id}: {_why(exc)}") from None
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
                raise SandboxError(f"could not stop container {self._container.short_id}: {_why(exc)}") from None
        self._client.api.wait(self._container.id, timeout=30)

    def put_harness_tree(self, tree: Tree, *, at: str = WORKDIR, owner: str = "root") -> None:
        """Write files as the harness: root-owned (read-only to the agent user) or agent-owned,
        at `at` (an absolute folder). The folder itself gets the same owner; folders above
        it are made, root-owned, where missing."""
        self.put_harness_trees({at: (tree, owner)})

    def put_harness_trees(self, trees: dict[str, tuple[Tree, str]]) -> None:
        """All of them in one archive: in a grading container, unpacked by root through the
        channel; anywhere else (or if that fails), one engine call."""
        archive = _harness_tar(trees)
        root_owned = [at for at, (_, owner) in trees.items() if owner in ("root", "scratch")]
        if not (self._grading and self._unpack(archive, ["bash", "-c", _UNTAR_AS_ROOT, "endstate", *root_owned])):
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
            raise SandboxError(f"reading {path} in container {self._container.short_id} failed: {exc}") from None
        if reply["code"] == 44:
            raise FileNotFoundError(f"{path} does not exist in the sandbox")
        if reply["code"] != 0 or len(archive) > max_bytes + _TAR_SLACK:
            said = stderr.decode("utf-8", errors="replace").strip()
            if len(archive) > max_bytes + _TAR_SLACK:
                said = f"more than {max_bytes} bytes"
            raise SandboxError(f"{path} in container {self._container.short_id} could not be read: {said}")
        try:
            return tar_to_tree(io.BytesIO(archive), strip=name + "/", max_bytes=max_bytes)
        except TreeTooLarge:
            raise SandboxError(f"{path} in container {self._container.short_id} holds more than {max_bytes} bytes") from None

    def read_path(self, path: str, *, max_bytes: int) -> bytes:
        """Bytes of any file in the container (a harness read, as root), at most `max_bytes`."""
        try:
            stream, _ = self._client.api.get_archive(self._container.id, path)
            tree = tar_to_tree(_ChunkReader(stream), max_bytes=max_bytes)
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
    def handle(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "container": self._container.id,
            "image": self.image,
            "image_id": self.image_id,
            "limits": msgspec.to_builtins(self.limits),
        }

    @classmethod
    def attach(cls, handle: dict[str, Any], *, own: bool = False) -> DockerSandbox:
        """Reach an existing container. It is removed by `close()` only when `own` is set."""
        if handle.get("backend") != cls.backend:
            raise SandboxError(f"handle is for the {handle.get('backend')!r} backend, not docker")
        self = cls.__new__(cls)
        self.limits = msgspec.convert(handle.get("limits", {}), SandboxLimits)
        self.image = handle["image"]
        self._client = _shared_client()
        try:
            self._container = self._client.containers.get(handle["container"])
        except docker.errors.NotFound:
            raise SandboxError(f"sandbox container {handle['container'][:12]} is gone") from None
        self.image_id = handle.get("image_id") or self._container.image.id
        self._finalizer = None
        self._open_channel = None
        self._grading = "CHOWN" in (self._container.attrs["HostConfig"].get("CapAdd") or [])  # made for grading
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
