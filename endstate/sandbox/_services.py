"""The agent's services, sealed with its end state and started again for its verifier.

In Harbor the verifier runs in the agent's own container: a daemon the agent started
(a database, a web server, a supervisor) is still up when the tests talk to it. endstate
grades in a fresh container, so for a task whose `[seal] processes` is on:

- **read** (`read_processes`): once the agent is done and before its container is stopped,
  the processes it left running are listed from /proc by the harness, as root: each one the
  agent started (the runner marks every command's processes with OOM score 1000, which
  lowering needs a capability no agent holds) whose parent is not one of them (a supervisor's
  children are its own to start again). Each is kept as what starts it again: its executable
  (/proc/PID/exe, resolved) and argv (/proc/PID/cmdline), working folder, uid, gid, groups and
  environment as the agent set it, less endstate's variables and any variable holding a secret
  value the harness holds (a provider's key; a name that looks secret, `GREET_TOKEN`, is the
  service's own and stays), with no pid, no time, sorted: two identical end states list the
  same. They are part of the
  sealed end state: hashed with it (`SystemChange.hash`) and listed in its diff.
- **started** (`start_processes`), in the grading container, after the sealed change is in
  place and the reward folder is made, before the verifier's files are staged (on a mount made
  after theirs, which never reaches them): each from the sealed filesystem, as its uid and gid,
  in a session of its own, its streams on /dev/null, with fewer capabilities than the verifier
  (none to mount or trace), and in a mount namespace of its own in which /logs (the reward),
  the folders the held-out files go to (`/workspace/.harbor`) and the harness's run folders
  under /opt/endstate are empty
  read-only folders and / is read-only but for /var, /run, /srv, /home, /root and
  /workspace: what it does cannot reach the reward the harness reads, the verifier it
  runs, or the programs the harness runs. It shares the container's network and process
  table, so the verifier reaches it as it did the agent's. It is started by its executable's
  path with its argv, never looked up by the words of its title: a daemon that rewrote its
  command line (nginx: `nginx: master process nginx`; redis: `redis-server 127.0.0.1:6379`)
  kept no argv, and is started by the /etc/init.d script that names its executable
  (`DAEMON=/usr/sbin/nginx`), as root, else from its title's words from the one naming its
  executable on. One that neither can start, or whose exec fails, is named in the verdict
  (`scripts/services.py` is the in-container side).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from importlib import resources
from typing import Any

import msgspec

from endstate.errors import SandboxError
from endstate.sandbox._channel import WATCH_S
from endstate.sandbox._runtime import HARNESS_USER, harness_env, runtime_python

__all__ = ["LIST_SERVICES", "Process", "bound_writes", "read_processes", "release_writes", "start_processes",
           "unrestartable"]

#: Most processes kept, and bytes of their description read.
_MOST, _MAX_BYTES = 64, 1024 * 1024
#: How long listing the services, or starting one, may take (a root service can stop the starter).
_START_S = 30.0
#: A secret shorter than this is no secret (models' MIN_SECRET_LENGTH): "1" is in every environment.
_SECRET_LENGTH = 8
#: The in-container program (stdlib only) that lists the services and starts one again.
_SCRIPT = (resources.files("endstate.sandbox") / "scripts" / "services.py").read_text(encoding="utf-8")

#: The command that prints, as JSON, the services left running (processes at OOM score 1000), as root.
LIST_SERVICES = ["python3", "-I", "-S", "-c", _SCRIPT, "list"]


class Process(msgspec.Struct, frozen=True):
    """A process the agent left running: how to start it again."""

    argv: list[str]
    cwd: str
    uid: int
    gid: int
    env: dict[str, str] = {}
    #: The init script that starts it again, for a daemon that rewrote its command line.
    init: str = ""
    #: Its executable, resolved (/proc/PID/exe): what is started again, by this path.
    exe: str = ""
    #: Its supplementary groups.
    groups: list[int] = []
    #: Why it cannot be started again ("" when it can): named in the verdict.
    unrestartable: str = ""

    def line(self) -> str:
        by = f" (by {self.init})" if self.init else f" (not restartable: {self.unrestartable})" if self.unrestartable \
            else ""
        return f"P {self.uid}:{self.gid} {self.cwd} {' '.join(self.argv).strip()}{by}"


def _kept(env: dict[str, str], secrets: Collection[str] = ()) -> dict[str, str]:
    """The environment as the agent set it, less endstate's own variables and any variable holding
    one of the harness's secret values (a provider key): a name that looks secret (`GREET_TOKEN`)
    is the service's own and stays."""
    held = [s for s in secrets if len(s) >= _SECRET_LENGTH]
    return {k: v for k, v in sorted(env.items())
            if not k.startswith("ENDSTATE") and not any(secret in v for secret in held)}


def _exec(client: Any, container: str, argv: list[str], deadline_s: float = _START_S,
          environment: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """`argv` as root in `container`: exit status, stdout, stderr. A root process of the end state can
    stop this one (SIGSTOP), so its end is waited for on this side, `deadline_s` at most: its stream is
    read here, each wait bounded (the SDK's reader polls without a timeout, and waited for ever)."""
    try:
        made = client.api.exec_create(container, argv, user=HARNESS_USER, workdir="/", environment=environment)
        stream = client.api.exec_start(made["Id"], socket=True)
    except Exception as exc:  # noqa: BLE001 - the engine's error, named (the chain tells a machinery fault)
        raise SandboxError(f"`{argv[0]} ... {argv[-1][:60]}` could not start in container {container[:12]}: "
                           f"{exc}") from exc
    pid: list[int] = []  # the process's host pid, asked of the engine once, when first needed

    def stopped() -> str:  # asked while it is silent: stopped, it can never end (what it started is the end state's)
        pid[:] = pid or [int(client.api.exec_inspect(made["Id"]).get("Pid") or 0)]
        return stopped_among(client.api, container, pid[0], children=False)

    try:
        out, err = _frames(getattr(stream, "_sock", stream), time.monotonic() + deadline_s, stopped)
    except (TimeoutError, OSError) as exc:
        raise SandboxError(f"`{argv[0]} ... {argv[-1][:60]}` in container {container[:12]} did not return within "
                           f"{deadline_s:.0f}s ({exc or type(exc).__name__})") from None
    except _Stopped as exc:
        raise SandboxError(f"`{argv[0]} ... {argv[-1][:60]}` in container {container[:12]} can never return: "
                           f"it is stopped ({exc})") from None
    finally:
        stream.close()
    return client.api.exec_inspect(made["Id"]).get("ExitCode", 1), out, err


def stopped_among(api: Any, container: str, pid: int, *, children: bool = True) -> str:
    """Which of process `pid` (the host's id) of `container` and (with `children`) its children the engine
    sees stopped (a stop signal, a tracer): "" when none is, or when the engine cannot say."""
    try:
        rows = api.top(container, ps_args="-o pid,ppid,stat,args")["Processes"] or []
        mine = [(int(p), state, args) for p, parent, state, args in (r[:4] for r in rows)
                if pid and (int(p) == pid or (children and int(parent) == pid))]
    except Exception:  # noqa: BLE001 - the engine's error, or rows of another shape: nothing is seen
        return ""
    return "; ".join(f"{p} {state} {args[:60]}" for p, state, args in mine if state[:1] in ("T", "t"))


class _Stopped(Exception):
    """The process an attach stream waits on is stopped: no end can come."""


def _frames(raw: Any, deadline: float, stopped: Callable[[], str] = lambda: "") -> tuple[bytes, bytes]:
    """Standard output and error of an engine attach stream (frames: stream id, 3 zero bytes, big-endian
    length, payload) read to its end; TimeoutError once `deadline` (monotonic) passes, _Stopped as soon as
    `stopped`, asked every WATCH_S seconds of silence, says the process is."""
    data, streams = bytearray(), {1: bytearray(), 2: bytearray()}
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no end before the deadline")
        raw.settimeout(min(remaining, WATCH_S))
        try:
            chunk = raw.recv(65536)
        except TimeoutError:
            seen = stopped()
            if seen:
                raise _Stopped(seen) from None
            continue
        if not chunk:
            return bytes(streams[1]), bytes(streams[2])
        data += chunk
        while len(data) >= 8 and len(data) >= 8 + int.from_bytes(data[4:8], "big"):
            size = int.from_bytes(data[4:8], "big")
            streams.get(data[0], streams[2]).extend(data[8:8 + size])
            del data[:8 + size]


def read_processes(client: Any, container: str, secrets: Collection[str] = ()) -> list[Process]:
    """The agent's processes still running in its container (see the module docstring), sorted;
    `secrets`, the values the harness holds, are kept out of their environments."""
    try:
        code, out, _ = _exec(client, container, LIST_SERVICES)
    except Exception as exc:  # noqa: BLE001 - the engine's error, named
        raise SandboxError(f"could not list the agent's processes in container {container[:12]}: {exc}") from None
    if code != 0 or len(out) > _MAX_BYTES:
        raise SandboxError(f"the agent's processes in container {container[:12]} could not be listed (exit {code})")
    try:
        found = [Process(p["argv"], p["cwd"], p["uid"], p["gid"], _kept(p["env"], secrets), p["init"], p["exe"],
                         p["groups"], p["unrestartable"]) for p in json.loads(out)]
    except (ValueError, KeyError, TypeError):
        raise SandboxError(f"the agent's processes in container {container[:12]} read as nonsense") from None
    if len(found) > _MOST:
        raise SandboxError(f"the agent left {len(found)} processes running: more than {_MOST} are never sealed")
    return sorted(found, key=lambda p: msgspec.json.encode(p))


def _harness(client: Any, container: str, *args: str) -> tuple[int, bytes, bytes]:
    """`services.py ARGS` as root in the grading container, from the harness's runtime, in its environment."""
    env = harness_env(client.api.inspect_container(container)["Config"]["Env"])
    return _exec(client, container, runtime_python("-c", _SCRIPT, *args), environment=env)


def bound_writes(client: Any, container: str, max_bytes: int) -> None:
    """What the end state writes to the grading container's own filesystem (the host's disk), its verifier
    and services together, held to `max_bytes` (see scripts/services.py: `bound_root`)."""
    code, _, err = _harness(client, container, "bound", str(max_bytes))
    if code != 0:
        why = (err.decode("utf-8", "replace").strip().splitlines() or [f"exit {code}"])[-1]
        raise SandboxError(f"could not bound what is written in container {container[:12]}: {why[:200]}")


def release_writes(client: Any, container: str) -> None:
    """`bound_writes` undone, what was written there dropped."""
    code, _, err = _harness(client, container, "unbound")
    if code != 0:
        why = (err.decode("utf-8", "replace").strip().splitlines() or [f"exit {code}"])[-1]
        raise SandboxError(f"could not release what is written in container {container[:12]}: {why[:200]}")


def start_processes(client: Any, container: str, processes: list[Process], staged: list[str] | None,
                    bound_bytes: int = 0) -> list[str]:
    """Start each of `processes` in the grading container (see the module docstring), the folders
    `staged` (absolute: where held-out files go) hidden from them (None: no wall at all, the mutation
    check's mutant); returns one line for each that could not be started again, naming it and why.
    `bound_bytes`: `bound_writes` first, in the same exec."""
    failed = [f"{' '.join(p.argv)[:80]}: {p.unrestartable or 'its program is unknown'}"
              for p in processes if p.unrestartable or not p.exe]
    started = [p for p in processes if not (p.unrestartable or not p.exe)]
    if not started:
        if bound_bytes:
            bound_writes(client, container, bound_bytes)
        return failed
    code, out, err = _harness(client, container, "start", msgspec.json.encode(started).decode(), json.dumps(staged),
                              *([str(bound_bytes)] if bound_bytes else []))
    try:
        said = json.loads(out) if code == 0 else None
    except ValueError:
        said = None
    if not isinstance(said, list) or len(said) != len(started):
        why = (err.decode("utf-8", "replace").strip().splitlines() or [f"exit {code}"])[-1]
        raise SandboxError(f"the services could not be started in container {container[:12]}: {why[:200]}")
    return failed + [f"{' '.join(p.argv)[:80]}: {why[:160]}" for p, why in zip(started, said) if why]


def unrestartable(listed: bytes) -> list[str]:
    """One line for each service in `listed` (LIST_SERVICES's output) that cannot be started again."""
    try:
        return [f"{' '.join(p['argv'])[:80]}: {p['unrestartable']}" for p in json.loads(listed) if p["unrestartable"]]
    except (ValueError, KeyError, TypeError):
        return ["(the services left running could not be listed)"]
