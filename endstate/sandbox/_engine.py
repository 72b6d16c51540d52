"""The connection to the Docker engine: one client per process, the API version learnt once,
removing a container (which the sandbox and the reaper both do), and freezing one to look at
what it runs.
"""

from __future__ import annotations

import io
import os
from typing import Any

import docker
import docker.errors

from endstate.errors import SandboxUnavailable

__all__ = ["API_VERSION_ENV", "DEFAULT_SOCKET", "connect", "engine_answers", "engine_configured", "engine_url",
           "freeze", "remove_container", "shared_client", "still_running", "why", "ChunkReader"]

#: Where the docker SDK looks for an engine when DOCKER_HOST is not set.
DEFAULT_SOCKET = "/var/run/docker.sock"


def engine_url() -> str:
    return os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_SOCKET}"


def engine_configured() -> str | None:
    """Why this machine means to have a Docker engine (DOCKER_HOST set, or the default socket
    present), or None when nothing says so."""
    if os.environ.get("DOCKER_HOST"):
        return f"DOCKER_HOST={os.environ['DOCKER_HOST']}"
    if os.path.exists(DEFAULT_SOCKET):
        return f"{DEFAULT_SOCKET} exists"
    return None


#: "<engine address> <API version>": what the first client of a process tree learnt, so that
#: later clients (every worker makes its own) skip asking. Asking is `GET /version`, for
#: which the engine runs `runc --version` and `docker-init --version` each time.
API_VERSION_ENV = "ENDSTATE_DOCKER_API"


def connect(timeout: float = 60.0) -> docker.DockerClient:
    """A client for the local engine, or SandboxUnavailable saying what to do."""
    url = engine_url()
    known_url, _, known_version = os.environ.get(API_VERSION_ENV, "").rpartition(" ")
    try:
        # The address is ours (engine_url), so the engine tried is the one named in every message.
        client = docker.from_env(timeout=timeout, version=known_version if known_url == url else None,
                                 environment={**os.environ, "DOCKER_HOST": url})
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


def shared_client() -> docker.DockerClient:
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


def why(exc: docker.errors.APIError) -> str:
    return str(exc.explanation or exc)


def remove_container(client: docker.DockerClient, container_id: str) -> bool:
    """Remove a container and its volumes, killing it if it runs; False when it was gone
    already or the engine is removing it anyway."""
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except docker.errors.NotFound:
        return False
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise
        return False
    return True


class ChunkReader(io.RawIOBase):
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


def freeze(container: Any) -> bool:
    """Freeze every process of `container` (the engine's cgroup freezer): whether it could."""
    try:
        container.pause()
    except docker.errors.APIError:
        return False
    return True


def still_running(container: Any, most: int = 12) -> str:
    """What `container` still runs, as the engine sees it (`docker top`, which asks nothing of the
    container, frozen or not): the clue to what held a command past its deadline."""
    try:
        rows = container.top(ps_args="-o pid,user,stat,args")["Processes"] or []  # the engine needs the pid
        shown = "; ".join(f"{user} {state} {args[:80]}" for _, user, state, args in (r[:4] for r in rows[:most]))
    except (docker.errors.APIError, KeyError, TypeError, ValueError):  # no answer, or rows of another shape
        return ""
    more = f"; and {len(rows) - most} more" if len(rows) > most else ""
    return f"; still running: {shown}{more}" if shown else ""
