"""Stand-in servers for tests on free loopback ports: a handler class served from a daemon thread, and\na real container registry (Debian's docker-registry)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that writes no line per request to stderr."""

    def log_message(self, *args: object) -> None:
        pass


def serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """`handler` answering on 127.0.0.1 at a free port (`server_address[1]`); stop it with
    `shutdown()` and `server_close()`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    return httpd, thread


@contextlib.contextmanager
def docker_registry(folder: Path) -> Iterator[str]:
    """`127.0.0.1:PORT`: Debian's docker-registry serving on a free loopback port, its storage under
    `folder` (the engine takes a loopback registry over plain HTTP, so no certificate). Fails the test
    where the package is missing: CI installs it (.ci/run), and no test that needs a registry is skipped."""
    program = shutil.which("docker-registry")
    if program is None:
        pytest.fail("Debian's docker-registry package is not installed: apt-get install -y docker-registry",
                    pytrace=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = folder / "registry.yml"
    config.write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {folder / 'blobs'}\n"
                      f"http:\n  addr: 127.0.0.1:{port}\n")
    server = subprocess.Popen([program, "serve", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)
