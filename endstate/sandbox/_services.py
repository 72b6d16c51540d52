"""The agent's services, sealed with its end state and started again for its verifier.

In Harbor the verifier runs in the agent's own container: a daemon the agent started
(a database, a web server, a supervisor) is still up when the tests talk to it. endstate
grades in a fresh container, so for a task whose `[seal] processes` is on:

- **read** (`read_processes`): once the agent is done and before its container is stopped,
  the processes it left running are listed from /proc by the harness, as root: each one the
  agent started (the runner marks every command's processes with OOM score 1000, which
  lowering needs a capability no agent holds) whose parent is not one of them (a supervisor's
  children are its own to start again). Each is kept as its command line, working folder,
  uid, gid and environment (less endstate's variables and any whose name says it is a secret),
  with no pid, no time, sorted: two identical end states list the same. They are part of the
  sealed end state: hashed with it (`SystemChange.hash`) and listed in its diff.
- **started** (`start_processes`), in the grading container, after the sealed change is in
  place and the held-out tests and the reward folder are staged, right before the verifier:
  each from the sealed filesystem, as its uid and gid, in a session of its own, its streams on
  /dev/null, with fewer capabilities than the verifier (none to mount or trace), and in a
  mount namespace of its own in which /logs (the reward), the staged tests
  (`/workspace/.harbor`) and the harness's run folders under /opt/endstate are empty
  read-only folders and / is read-only but for /var, /run, /srv, /home, /root and
  /workspace: what it does cannot reach the reward the harness reads, the verifier it
  runs, or the programs the harness runs. It shares the container's network and process
  table, so the verifier reaches it as it did the agent's. A daemon that rewrote its own
  command line (redis: `redis-server 127.0.0.1:6379`) is started by the /etc/init.d script
  that names it (`DAEMON=/usr/bin/redis-server`), as root; one no script names, from its
  command line split at spaces.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from endstate.errors import SandboxError

__all__ = ["Process", "read_processes", "start_processes"]

#: Most processes kept, and bytes of their description read.
_MOST, _MAX_BYTES = 64, 1024 * 1024
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH", re.IGNORECASE)

# Run as root in the agent's container (stdlib only): prints the agent's processes as JSON.
_LIST = r"""
import json, os
def private(base, uid, gid):
    # A process's cwd and environment are read as its own user (root lacks SYS_PTRACE here).
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read_end)
            os.setgroups([]); os.setresgid(gid, gid, gid); os.setresuid(uid, uid, uid)
            with open(base + "environ", "rb") as f:
                env = [e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e]
            said = {"cwd": os.readlink(base + "cwd"),
                    "env": {k.decode("utf-8", "surrogateescape"): v.decode("utf-8", "surrogateescape") for k, v in env}}
            os.write(write_end, json.dumps(said).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read()
    os.waitpid(child, 0)
    return json.loads(said)
def init_script(argv):
    # A daemon that rewrote its command line (redis, nginx) is started again by its init script.
    if len(argv) != 1 or " " not in argv[0].strip() or not os.path.isdir("/etc/init.d"):
        return ""
    program = argv[0].split()[0]
    for script in sorted(os.listdir("/etc/init.d")):
        try:
            with open("/etc/init.d/" + script, "rb") as f:
                text = f.read()
        except OSError:
            continue
        if ("DAEMON=" + program).encode() in text:
            return "/etc/init.d/" + script
    return ""
found = {}
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    base = "/proc/" + name + "/"
    try:
        with open(base + "oom_score_adj", "rb") as f:
            if f.read().strip() != b"1000":
                continue
        with open(base + "stat", "rb") as f:
            rest = f.read().rsplit(b") ", 1)[1].split()
        with open(base + "cmdline", "rb") as f:
            argv = f.read().split(b"\0")[:-1]
        st = os.stat(base)
        if rest[0] == b"Z" or not argv:
            continue
        argv = [a.decode("utf-8", "surrogateescape") for a in argv]
        while len(argv) > 1 and not argv[-1]:  # a rewritten command line is padded with NULs
            argv.pop()
        found[int(name)] = {"parent": int(rest[1]), "argv": argv, "uid": st.st_uid, "gid": st.st_gid,
                            "init": init_script(argv), **private(base, st.st_uid, st.st_gid)}
    except (OSError, ValueError, IndexError):
        continue
print(json.dumps([p for p in found.values() if p["parent"] not in found]))
"""

# Run as root in the grading container (stdlib only), argv[1] the process as JSON: starts it as
# the module docstring says and returns at once.
_START = r"""
import ctypes, json, os, sys
spec = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
def check(result, what):
    if result != 0:
        raise OSError(ctypes.get_errno(), what)
if os.fork():
    os._exit(0)
os.setsid()
check(libc.unshare(0x00020000), "unshare")
check(libc.mount(None, b"/", None, (1 << 14) | (1 << 18), None), "private")
for hidden in ("/logs", "/workspace/.harbor", "/opt/endstate/verifier-tmp", "/opt/endstate/report",
               "/opt/endstate/scratch"):
    if os.path.isdir(hidden) and not os.path.islink(hidden):
        check(libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", 1 | 2 | 4, b"size=4k,mode=0555"), hidden)
for kept in ("/var", "/run", "/srv", "/home", "/root", "/workspace"):  # writable: a daemon's state, logs, pid files
    if os.path.isdir(kept) and not os.path.islink(kept):
        check(libc.mount(kept.encode(), kept.encode(), None, 4096, None), kept)
check(libc.mount(None, b"/", None, 32 | 4096 | 1, None), "read-only /")  # the programs and /etc the harness runs
with open("/proc/self/oom_score_adj", "w") as f:
    f.write("1000")
for cap in range(64):
    if cap not in (0, 1, 3, 4, 6, 7, 10):  # CHOWN DAC_OVERRIDE FOWNER FSETID SETGID SETUID NET_BIND_SERVICE
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP; past the last capability it fails, as it may
argv, uid, gid = spec["argv"], spec["uid"], spec["gid"]
if spec["init"]:
    argv, uid, gid = [spec["init"], "start"], 0, 0
elif len(argv) == 1 and " " in argv[0].strip():
    argv = argv[0].split()
null = os.open("/dev/null", os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
try:
    os.chdir(spec["cwd"])
except OSError:
    os.chdir("/")
os.execvpe(argv[0], argv, spec["env"])
"""


class Process(msgspec.Struct, frozen=True):
    """A process the agent left running: how to start it again."""

    argv: list[str]
    cwd: str
    uid: int
    gid: int
    env: dict[str, str] = {}
    #: The init script that starts it again, for a daemon that rewrote its command line.
    init: str = ""

    def line(self) -> str:
        return f"P {self.uid}:{self.gid} {self.cwd} {' '.join(self.argv).strip()}" + (f" (by {self.init})" if self.init else "")


def _kept(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(env.items()) if not k.startswith("ENDSTATE") and not _SECRET.search(k)}


def _exec(client: Any, container: str, argv: list[str]) -> tuple[int, bytes]:
    made = client.api.exec_create(container, argv, user="root", workdir="/")
    output = client.api.exec_start(made["Id"], demux=True)
    return client.api.exec_inspect(made["Id"]).get("ExitCode", 1), (output[0] or b"")


def read_processes(client: Any, container: str) -> list[Process]:
    """The agent's processes still running in its container (see the module docstring), sorted."""
    try:
        code, out = _exec(client, container, ["python3", "-I", "-S", "-c", _LIST])
    except Exception as exc:  # noqa: BLE001 - the engine's error, named
        raise SandboxError(f"could not list the agent's processes in container {container[:12]}: {exc}") from None
    if code != 0 or len(out) > _MAX_BYTES:
        raise SandboxError(f"the agent's processes in container {container[:12]} could not be listed (exit {code})")
    try:
        found = [Process(p["argv"], p["cwd"], p["uid"], p["gid"], _kept(p["env"]), p["init"]) for p in json.loads(out)]
    except (ValueError, KeyError, TypeError):
        raise SandboxError(f"the agent's processes in container {container[:12]} read as nonsense") from None
    if len(found) > _MOST:
        raise SandboxError(f"the agent left {len(found)} processes running: more than {_MOST} are never sealed")
    return sorted(found, key=lambda p: msgspec.json.encode(p))


def start_processes(client: Any, container: str, processes: list[Process]) -> None:
    """Start each of `processes` in the grading container (see the module docstring)."""
    for process in processes:
        code, _ = _exec(client, container, ["python3", "-I", "-S", "-c", _START,
                                            msgspec.json.encode(process).decode()])
        if code != 0:
            raise SandboxError(f"could not start the agent's process again in the grading container: {process.line()}")
