"""Who owns a sandbox container, and removing the ones whose owner is gone.

Every container endstate makes is labelled with its run and its owner: the
process that created it (pid and start time, so a reused pid is not mistaken for
it), the host, the pid namespace and the boot. A harness killed with SIGKILL
cannot clean up; the next endstate command on the same host does, by calling
`reap()`. A container is removed only when its owner is known to be gone: same
host and pid namespace, and either another boot or no live process with that pid
and start time. Containers of owners this process cannot judge (another host,
another pid namespace, labels of an older endstate) are left alone.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from pathlib import Path

import docker
import docker.errors

from endstate.sandbox._engine import connect, remove_container

__all__ = ["LABEL", "RUN_LABEL", "owner_labels", "one_off_labels", "owner_alive", "reap"]

#: Every container endstate makes carries this label.
LABEL = "endstate"
RUN_LABEL = "endstate.run"
_PID, _START, _HOST, _PIDNS, _BOOT, _CREATED = (
    "endstate.owner.pid", "endstate.owner.start", "endstate.owner.host", "endstate.owner.pidns",
    "endstate.owner.boot", "endstate.created",
)


def _start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # Field 2 (the name) may hold spaces and parentheses: count from the last ")".
    return stat.rsplit(")", 1)[1].split()[19]


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def owner_labels(run_id: str) -> dict[str, str]:
    """The labels naming this process as the owner of a container of run `run_id`."""
    pid = os.getpid()
    return {
        LABEL: "1",
        RUN_LABEL: run_id,
        _PID: str(pid),
        _START: _start_ticks(pid) or "",
        _HOST: socket.gethostname(),
        _PIDNS: _pid_namespace(),
        _BOOT: _boot_id(),
        _CREATED: str(int(time.time())),
    }


def one_off_labels() -> dict[str, str]:
    """The owner labels for a container that belongs to no run (a question asked of an image, a
    wheel built, a volume filled): the reaper removes it if this process dies before it does."""
    return owner_labels("one-off-" + secrets.token_hex(8))


def owner_alive(labels: dict[str, str]) -> bool | None:
    """True if the owner named by `labels` still runs, False if it is gone, None if this
    process cannot tell (no owner labels, or an owner on another host or pid namespace)."""
    if _PID not in labels or labels.get(_HOST) != socket.gethostname() or labels.get(_PIDNS) != _pid_namespace():
        return None
    if labels.get(_BOOT) != _boot_id():
        return False  # the machine rebooted since: nothing of that boot runs
    return _start_ticks(int(labels[_PID])) == labels.get(_START)


def remove_run_containers(run_id: str) -> list[str]:
    """Remove every container labelled with this run that is still there (its removal failed
    while the engine was away); returns their ids. Quiet when no engine answers."""
    try:
        client = connect(timeout=30)
    except Exception:  # noqa: BLE001 - no engine: nothing can be removed now, and the reaper will later
        return []
    removed = []
    try:
        for info in client.api.containers(all=True, filters={"label": f"{RUN_LABEL}={run_id}"}):
            if remove_container(client, info["Id"]):
                removed.append(info["Id"])
    except docker.errors.DockerException:
        pass
    finally:
        client.close()
    return removed


def reap(client: docker.DockerClient | None = None) -> list[str]:
    """Remove every endstate container whose owner is gone; return their ids."""
    own = client is None
    if client is None:
        try:
            client = docker.from_env(timeout=30)
        except docker.errors.DockerException:
            return []  # no engine: nothing of ours can be running
    removed = []
    try:
        for info in client.api.containers(all=True, filters={"label": f"{LABEL}=1"}):
            if owner_alive(info.get("Labels") or {}) is not False:
                continue
            if remove_container(client, info["Id"]):
                removed.append(info["Id"])
    except docker.errors.DockerException:
        return removed  # the engine went away: the next command tries again
    finally:
        if own:
            client.close()
    return removed
