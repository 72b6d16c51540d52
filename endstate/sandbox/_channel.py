"""One long-lived stream into a container: a command or file tool is one request on it.

A `docker exec` costs the engine a create, a start, an attach and an inspect (about
65 ms here, with a core busy); a request on an open stream costs an in-container
fork. A `Channel` starts the server in `_shim_server` once, by one exec with its
standard input attached, and then sends it requests one at a time. The server runs
as root inside the container and only runs what it is asked to (the command runner,
the file tools' scripts), so results are what separate execs gave.

The channel belongs to the process that opened it: a forked child opens its own.
It dies with the container, and the server ends when the opening process hangs up.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from endstate.sandbox._runtime import HARNESS_USER, RUNTIME_PATH, RuntimeGuards, harness_env

__all__ = ["Channel", "ChannelBroken", "ChannelStalled", "SERVER_ARGV", "SERVER_ENV"]

#: How the server starts: isolated mode and no site, so nothing the agent wrote is imported. Its
#: source travels in the environment (which only root may read), so `ps` shows one short line.
#: In a grading container it is the harness's runtime's Python, and what it runs is found on the
#: runtime's PATH, in an environment the harness sets whole (see _runtime): ENDSTATE_RUNTIME names it.
SERVER_ARGV = ["python3", "-I", "-S", "-c", "import os; exec(os.environ.pop('ENDSTATE_SERVER'))", "endstate-server"]
SERVER_ENV = {"ENDSTATE_SERVER": Path(__file__).with_name("_shim_server.py").read_text()}

_CHUNK = 64 * 1024
#: How often a watched request that has had no reply asks its watch whether one can still come.
WATCH_S = 2.0


class ChannelBroken(Exception):
    """The stream ended or stalled; the message holds what the server said, if anything."""


class ChannelStalled(ChannelBroken):
    """No reply can come: the request's `watch` saw why (the server stopped) before the deadline."""


class Channel:
    def __init__(self, stream: Any, *, api: Any = None, exec_id: str = "") -> None:
        """A channel over `stream`, an engine attach stream (docker-py's socket); `api` and
        `exec_id` let a broken channel say why the server ended."""
        self._api, self._exec_id = api, exec_id
        self._socket = stream
        self._raw = getattr(stream, "_sock", stream)
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._frames = bytearray()  # bytes of the engine's stream not yet split into frames
        self._out = bytearray()  # the server's standard output, not yet read as replies
        self._err = bytearray()  # what the server said on standard error (a crash, a missing python3)
        self.broken = False
        self._server_pid = 0
        self.watch: Callable[[], str] | None = None

    @classmethod
    def open(cls, api: Any, container_id: str, *, runtime: bool = False,
             container_env: list[str] | None = None, guards: RuntimeGuards = RuntimeGuards()) -> Channel:
        """Start the server in the container (one exec) and return the channel to it; `runtime`:
        from the harness's runtime mounted there (a grading container's), not the image's Python,
        in the harness's own environment, the container's (`container_env`) kept for commands."""
        argv, env = SERVER_ARGV, SERVER_ENV
        if runtime:
            argv = [f"{RUNTIME_PATH}/python3", *SERVER_ARGV[1:]]
            env = {**harness_env(container_env, guards), **SERVER_ENV, "ENDSTATE_RUNTIME": RUNTIME_PATH}
        exec_id = api.exec_create(container_id, argv, user=HARNESS_USER, workdir="/", stdin=True,
                                  environment=env)["Id"]
        return cls(api.exec_start(exec_id, socket=True), api=api, exec_id=exec_id)

    def request(self, header: dict[str, Any], payload: bytes = b"", *,
                deadline: float) -> tuple[dict[str, Any], bytes, bytes]:
        """Send one request and wait, until `deadline` (monotonic), for its reply:
        (reply header, stdout, stderr). Raises ChannelBroken; the channel is then unusable.
        The channel's `watch`, if it has one, is asked every WATCH_S seconds of silence why no reply
        can come ("" while one can): ChannelStalled then, without waiting for the deadline."""
        with self._lock:
            if self.broken:
                raise ChannelBroken("the channel broke earlier")
            encoded = json.dumps({**header, "size": len(payload)}).encode()
            try:
                self._raw.settimeout(max(deadline - time.monotonic(), 0.001))
                self._raw.sendall(len(encoded).to_bytes(4, "big") + encoded + payload)
                size = int.from_bytes(self._take(4, deadline), "big")
                reply = json.loads(self._take(size, deadline))
                out = self._take(reply["out"], deadline)
                err = self._take(reply["err"], deadline)
            except ChannelStalled:
                self.broken = True
                raise
            except (OSError, ValueError, KeyError, ChannelBroken) as exc:  # TimeoutError is an OSError
                self.broken = True
                raise ChannelBroken(self._why(exc)) from None
            return reply, out, err

    def server_pid(self) -> int:
        """The server's process id as the engine sees it (the host's), 0 when the engine cannot say."""
        if not self._server_pid and self._api is not None:
            try:
                self._server_pid = int(self._api.exec_inspect(self._exec_id).get("Pid") or 0)
            except Exception:  # noqa: BLE001 - a watch that cannot look sees nothing
                pass
        return self._server_pid

    def _why(self, exc: BaseException) -> str:
        said = self._err.decode("utf-8", errors="replace").strip()[-500:]
        if said or not isinstance(exc, ChannelBroken):
            return said or str(exc) or type(exc).__name__
        code = None
        if self._api is not None:
            try:  # the stream ended without a word: the exit code says whether the server ever ran
                code = self._api.exec_inspect(self._exec_id).get("ExitCode")
            except Exception:  # noqa: BLE001 - only colours the message
                pass
        if code in (126, 127):
            return f"the in-sandbox server could not start ({SERVER_ARGV[0]} exited {code}): the image needs python3"
        return f"the server's stream ended (exit code {code})" if code is not None else str(exc)

    def _take(self, size: int, deadline: float) -> bytes:
        watch = self.watch
        while len(self._out) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no reply before the deadline")
            self._raw.settimeout(min(remaining, WATCH_S) if watch else remaining)
            try:
                data = self._raw.recv(_CHUNK)
            except TimeoutError:
                seen = watch() if watch else ""
                if seen:
                    raise ChannelStalled(seen) from None
                continue  # the deadline decides, above
            if not data:
                raise ChannelBroken("the server's stream ended")
            self._split(data)
        taken = bytes(self._out[:size])
        del self._out[:size]
        return taken

    def _split(self, data: bytes) -> None:
        """Docker's attach framing: stream id, 3 zero bytes, big-endian length, payload."""
        self._frames += data
        while len(self._frames) >= 8:
            size = int.from_bytes(self._frames[4:8], "big")
            if len(self._frames) < 8 + size:
                return
            (self._out if self._frames[0] == 1 else self._err).extend(self._frames[8:8 + size])
            del self._frames[:8 + size]

    def close(self) -> None:
        self.broken = True
        try:
            self._socket.close()
        except OSError:
            pass
