"""Local servers and a tiny task for the model tests. Nothing here leaves 127.0.0.1."""

from __future__ import annotations

import json
import socket
import textwrap
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import msgspec
import pytest

from endstate.models import RunSettings, ScriptedServer

TASK_ID = "demo-task"

REFERENCE = """\
summary = "Read calc.py and fixed add()."

[[steps]]
say = "Reading the code."
calls = [{ tool = "read_file", args = { path = "calc.py" } }]

[[steps]]
calls = [
  { tool = "edit_file", args = { path = "calc.py", old = "a - b", new = "a + b" } },
  { tool = "bash", args = { command = "python -m pytest -q", timeout = 60 } },
]

[[steps]]
say = "Fixed add()."
"""


def write_task(root: Path, task_id: str = TASK_ID, reference: str = REFERENCE) -> Path:
    folder = root / task_id
    (folder / "fixture").mkdir(parents=True)
    (folder / "fixture" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (folder / "prompt.md").write_text("Fix add().\n")
    (folder / "task.toml").write_text(
        textwrap.dedent(
            f"""\
            id = "{task_id}"
            category = "bugfix"

            [[graders]]
            name = "endstate.grading:tests_pass"
            args = {{ command = "python -m pytest -q", min_tests = 1 }}
            """
        )
    )
    (folder / "reference.toml").write_text(reference)
    return folder


@pytest.fixture
def tasks_root(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    write_task(root)
    return root


@pytest.fixture
def scripted(tasks_root: Path) -> Iterator[ScriptedServer]:
    with ScriptedServer(tasks_root) as server:
        yield server


@pytest.fixture
def fast() -> RunSettings:
    """Settings for tests: short timeouts, no retries unless a test asks."""
    return RunSettings(timeout_s=5)


class Seen(msgspec.Struct):
    """One request a FakeServer received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


#: What a FakeServer's responder returns: (status, headers, body).
Reply = tuple[int, dict[str, str], bytes]


class FakeServer:
    """A loopback HTTP server answering every POST with `responder(seen, n)`; records requests.

    `n` is the 0-based index of the request, so a responder can fail a few times
    and then succeed.
    """

    def __init__(self, responder: Callable[[Seen, int], Reply]) -> None:
        self.responder = responder
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with fake._lock:
                    n = len(fake.seen)
                    fake.seen.append(seen)
                status, headers, data = fake.responder(seen, n)
                self.send_response_only(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


@pytest.fixture
def fake_server() -> Iterator[Callable[[Callable[[Seen, int], Reply]], FakeServer]]:
    servers: list[FakeServer] = []

    def start(responder: Callable[[Seen, int], Reply]) -> FakeServer:
        server = FakeServer(responder)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def _json_reply(body: Any, status: int = 200, **headers: str) -> Reply:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(body).encode()


@pytest.fixture
def json_reply() -> Callable[..., Reply]:
    """`json_reply(body, status=200, **headers)`: a Reply carrying `body` as JSON."""
    return _json_reply


@pytest.fixture
def make_task() -> Callable[..., Path]:
    """`make_task(root, task_id=..., reference=...)`: write a minimal valid task folder."""
    return write_task


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
