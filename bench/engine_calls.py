"""Count the Docker engine API calls a command makes: a proxy on a unix socket of its own
that forwards every byte to the engine and notes each request line it carries.

    python bench/engine_calls.py endstate eval --suite tasks --replay cassettes/scripted-reference -j 2
    python bench/engine_calls.py --per 22 endstate eval ...     # the counts divided by 22 (per task)

The command runs with DOCKER_HOST pointing at the proxy, so every process of its tree
(fork-server workers included) is counted. Prints the calls by kind (method and path, ids
and the API version left out), and the execs among them. A round trip costs the engine a
request's parsing at least; the ones marked (*) make it start or stop a process (runc, a
shim) or mount a container's filesystem to read or write it, which is where its CPU goes.
"""

from __future__ import annotations

import collections
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_REQUEST = re.compile(rb"(GET|POST|PUT|DELETE|HEAD) /v1\.\d+(/[^ ?]*)[^ ]* HTTP/1\.1\r\n")
_CREATED = re.compile(rb'\{"Id":"([0-9a-f]{64})","Warnings"')  # an exec's answer has no Warnings
_ID = re.compile(r"/[0-9a-f]{64}|/endstate-[A-Za-z0-9_.-]+")
#: Calls that make the engine start a process (runc, a shim) or re-execute itself (archives).
HEAVY = ("POST /containers/<id>/start", "POST /exec/<id>/start", "DELETE /containers/<id>",
         "POST /containers/<id>/kill", "PUT /containers/<id>/archive", "GET /containers/<id>/archive",
         "POST /containers/create")


def _kind(method: bytes, path: bytes) -> str:
    text = _ID.sub("/<id>", path.decode("latin-1"))
    text = re.sub(r"^/images/[^/]+/json$", "/images/<name>/json", text)
    text = re.sub(r"^/volumes/[^/]+$", "/volumes/<name>", text)
    return f"{method.decode()} {text}"


class CountingProxy:
    """A unix socket in a temporary folder whose connections are forwarded to `engine`."""

    def __init__(self, engine: str = "/var/run/docker.sock") -> None:
        self.engine = engine
        self.calls: collections.Counter[str] = collections.Counter()
        self.created: list[str] = []  # the ids of the containers made through the proxy, in order
        self._lock = threading.Lock()
        self._folder = tempfile.TemporaryDirectory(prefix="endstate-proxy-")
        self.path = os.path.join(self._folder.name, "docker.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"unix://{self.path}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.engine)
            threading.Thread(target=self._pipe, args=(client, engine, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(engine, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        tail = b""
        try:
            while data := source.recv(65536):
                sink.sendall(data)
                seen = tail + data
                for match in (_REQUEST if requests else _CREATED).finditer(seen):
                    if match.end() > len(tail):  # not counted with the previous chunk
                        with self._lock:
                            if requests:
                                self.calls[_kind(match.group(1), match.group(2))] += 1
                            else:
                                self.created.append(match.group(1).decode())
                tail = seen[-200:]
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def take(self) -> collections.Counter[str]:
        """The calls counted since the last take."""
        with self._lock:
            taken, self.calls = self.calls, collections.Counter()
        return taken

    def close(self) -> None:
        self._server.close()
        self._folder.cleanup()


def show(calls: collections.Counter[str], per: int = 1) -> None:
    for kind, count in sorted(calls.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count / per:7.2f}  {kind}{'  (*)' if kind in HEAVY else ''}")
    execs = sum(n for k, n in calls.items() if k == "POST /containers/<id>/exec")
    print(f"  {sum(calls.values()) / per:7.2f}  in all; {execs / per:.2f} execs, "
          f"{sum(n for k, n in calls.items() if k in HEAVY) / per:.2f} marked (*)")


def main(argv: list[str]) -> None:
    per = 1
    if argv[:1] == ["--per"]:
        per, argv = int(argv[1]), argv[2:]
    if not argv:
        sys.exit(__doc__)
    proxy = CountingProxy()
    env = {**os.environ, "DOCKER_HOST": proxy.url}
    env.pop("ENDSTATE_DOCKER_API", None)
    code = subprocess.run(argv, env=env, cwd=Path(__file__).resolve().parents[1]).returncode
    print(f"{' '.join(argv)}: exit {code}; engine API calls{f' per {per}' if per > 1 else ''}:")
    show(proxy.take(), per)
    proxy.close()


if __name__ == "__main__":
    main(sys.argv[1:])
