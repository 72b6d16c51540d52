"""Telling a fault of the machinery from everything else.

A task can end in an error because endstate is wrong (a harness bug), because its
input is (a user error), or because the machinery under it failed: the Docker
engine stopped answering or restarted, a container vanished, the engine refused a
call, the host's disk filled up. Only the last kind says nothing about the agent
and is worth running again, so it is named here, in one line, from two sources:

- the exception itself (`machinery_fault`): the types the engine's client and the
  OS raise when the machinery fails, looked for along the exception's chain;
- the engine, asked after the fact (`EngineWatch`): an engine that does not answer,
  or whose socket is not the one it was when the task started (it restarted), was
  the cause of whatever went wrong in between, however it surfaced.
"""

from __future__ import annotations

import errno
import os
from typing import Any
from urllib.parse import urlsplit

import docker.errors
import requests.exceptions

from endstate.errors import CommandWedged, ContainerGone
from endstate.sandbox._engine import freeze, still_running

__all__ = ["machinery_fault", "services_interfered", "EngineWatch"]

_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _one_line(text: object, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def machinery_fault(exc: BaseException) -> str | None:
    """One line naming the machinery fault `exc` comes from, or None when it is not one."""
    for link in _chain(exc):
        if isinstance(link, CommandWedged):
            return _one_line(f"a sandbox's command runner hung ({link})", limit=300)
        if isinstance(link, OSError) and link.errno in _DISK_FULL:
            return _one_line(f"the host's disk is full ({link.filename or link.strerror})")
        if isinstance(link, docker.errors.ImageNotFound):
            return None  # an image that was never built is the user's to fix
        if isinstance(link, ContainerGone):
            return _one_line(f"a sandbox container was removed or stopped under the task ({link})", limit=300)
        if isinstance(link, docker.errors.NotFound):
            return _one_line(f"a sandbox container vanished ({link.explanation or link})")
        if isinstance(link, docker.errors.APIError) and link.status_code == 409 and "is not running" in str(link):
            # Made before the engine went down (sandboxes are made ahead): the engine stopped it.
            # An agent cannot stop its own container (see `first_process`).
            return _one_line(f"a sandbox container was stopped under the task ({link.explanation or link})")
        if isinstance(link, docker.errors.APIError) and (link.status_code or 0) >= 500:
            said = link.explanation or link
            if "no space left on device" in str(said):
                return _one_line(f"the Docker engine's disk is full ({said})")
            return _one_line(f"the Docker engine refused a call ({said})")
        if isinstance(link, (requests.exceptions.ConnectionError, ConnectionError)):
            return _one_line(f"the connection to the Docker engine broke ({type(link).__name__}: {link})")
    return None


#: What a grading container may gain on the host's disk (its writable layer) before a full disk is its doing.
_WRITTEN_MAX = 256 * 1024 * 1024


def services_interfered(box: Any, exc: BaseException) -> str | None:
    """What the end state's services, running as root beside the harness in grading container `box`,
    did to the harness's command that failed with `exc`: seen with every process of the container
    frozen (the engine's cgroup freezer), never by trying again. None when the machinery failed
    under them instead: the engine does not answer, the container is gone or stopped (its first
    process ignores every signal sent from inside), or the host's disk filled while the container
    had written little to it."""
    frozen = next((getattr(link, "frozen", None) for link in _chain(exc) if isinstance(link, CommandWedged)), None)
    if frozen is not None:  # looked at, frozen, before the wedged container was killed
        return _one_line(f"a harness command never returned{frozen}", limit=300)
    inner = getattr(box, "inner", box)
    client, container = getattr(inner, "_client", None), getattr(inner, "container_id", None)
    if client is None or container is None or not EngineWatch().answers():
        return None
    try:
        (state,) = client.api.containers(all=True, size=True, filters={"id": container}) or [{}]
    except (docker.errors.DockerException, requests.exceptions.RequestException, ValueError):
        return None
    written = state.get("SizeRw") or 0
    if state.get("State") not in ("running", "paused"):
        return None
    if any(isinstance(link, OSError) and link.errno in _DISK_FULL for link in _chain(exc)) or "no space left" in str(exc):
        return _one_line(f"the host's disk filled while they had written {written // (1024 * 1024)} MiB") \
            if written > _WRITTEN_MAX else None
    handle = client.containers.get(container)
    frozen = freeze(handle)
    try:
        seen = still_running(handle)
    finally:
        if frozen:
            handle.unpause()
    return _one_line(f"the harness's command failed ({exc}){seen}", limit=300)


class EngineWatch:
    """Whether the engine at DOCKER_HOST answers, and whether it is still the same
    process: a restarted engine makes its unix socket anew."""

    def __init__(self) -> None:
        url = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
        self.url = url
        self._socket = urlsplit(url).path if url.startswith("unix://") else ""

    def identity(self) -> tuple[int, int] | None:
        """Which engine is listening now (None: not knowable, or no socket)."""
        if not self._socket:
            return None
        try:
            status = os.stat(self._socket)
        except OSError:
            return None
        return status.st_ino, status.st_mtime_ns

    def answers(self, timeout: float = 5.0) -> bool:
        """Whether the engine answers a ping now (an engine on its way down or up may
        refuse the connection outright, which the client does not wrap)."""
        try:
            client = docker.DockerClient(base_url=self.url, timeout=timeout)
        except docker.errors.DockerException:
            return False
        try:
            return bool(client.ping())
        except (docker.errors.DockerException, requests.exceptions.RequestException, OSError):
            return False
        finally:
            client.close()

    def fault_since(self, identity: tuple[int, int] | None) -> str | None:
        """The machinery fault since `identity` was taken, if any: the engine went away or restarted."""
        if not self.answers():
            return f"the Docker engine at {self.url} does not answer"
        if identity is not None and self.identity() != identity:
            return f"the Docker engine at {self.url} restarted during the task"
        return None
