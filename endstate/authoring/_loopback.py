"""A local httpbin for the tests that read `HTTPBIN_URL`, in the task's image.

requests' tests before 2.9 call httpbin.org unless `HTTPBIN_URL` names another httpbin, and
SWE-bench's harness runs them with the network on. The sandbox never has it, so the gold fix of
such a record failed for want of httpbin.org. Where the project's code reads `HTTPBIN_URL`, the
task's image gets httpbin itself (PyPI's) and a pytest plugin of endstate's that serves it on
loopback from the test process and points `HTTPBIN_URL` there before the test modules are
imported: the way requests 2.9 and later serve it through pytest-httpbin. The plugin is an image
distribution, root's and built before any agent runs, so the agent's pytest loads it as the
grading runner does (`endstate_runner._image_plugins`); a copy of it in the end state is never
loaded. What this httpbin cannot stand in for (TLS, a redirect to another host) still fails for
want of the network, and is said so (`_offline`).
"""

from __future__ import annotations

from endstate.sandbox import FileEntry, Tree

__all__ = ["LOOPBACK_HTTPBIN", "LOOPBACK_SAID", "loopback_files", "loopback_requirements", "reads_httpbin_url"]

#: Where the plugin serves httpbin, fixed so that what a failing test prints is the same on every run
#: (another free port where it is taken: a second test process in the same network namespace).
LOOPBACK_HTTPBIN = ("127.0.0.1", 31415)
#: What the task says of it.
LOOPBACK_SAID = (f"The project's tests read HTTPBIN_URL: the task's image serves httpbin (PyPI's) on "
                 f"http://{LOOPBACK_HTTPBIN[0]}:{LOOPBACK_HTTPBIN[1]}/ from each pytest process and points HTTPBIN_URL "
                 "there, where SWE-bench's harness reached httpbin.org; a test that needs TLS or another host still "
                 "needs the network.")
_DIST = "endstate_loopback_httpbin"
_VERSION = "1"
_PLUGIN = f'''\
"""endstate's loopback httpbin: serves PyPI's httpbin on {LOOPBACK_HTTPBIN[0]} from this test process and
points HTTPBIN_URL at it, for tests that would otherwise reach httpbin.org (the sandbox has no network)."""
import logging
import os
import threading

import httpbin
from werkzeug.serving import make_server

_served = []


def _server():
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    for port in ({LOOPBACK_HTTPBIN[1]}, 0):  # another free port where it is taken by another test process here
        try:
            return make_server({LOOPBACK_HTTPBIN[0]!r}, port, httpbin.app, threaded=True)
        except OSError:
            if port == 0:
                raise


def pytest_configure(config):
    if not _served:
        server = _server()
        threading.Thread(target=server.serve_forever, name="endstate-httpbin", daemon=True).start()
        _served.append(server)
    os.environ["HTTPBIN_URL"] = "http://%s:%d/" % ({LOOPBACK_HTTPBIN[0]!r}, _served[0].server_port)


def pytest_unconfigure(config):
    while _served:
        server = _served.pop()
        server.shutdown()
        server.server_close()
'''


def reads_httpbin_url(project: Tree) -> bool:
    """Whether the project's Python reads `HTTPBIN_URL` (requests' tests before 2.9)."""
    return any(path.endswith(".py") and not entry.link and b"HTTPBIN_URL" in entry.data
               for path, entry in project.items())


def loopback_requirements(project: Tree) -> list[str]:
    """What the task's image installs for the loopback httpbin, where the project reads `HTTPBIN_URL`."""
    # flasgger 0.9.5, httpbin's dependency (its last wheel), imports what Flask 2.3 removed (flask.Markup).
    return ["httpbin", "flask<2.3"] if reads_httpbin_url(project) else []


def loopback_files(project: Tree) -> Tree:
    """The plugin's module and `.dist-info` (a `pytest11` entry point), as files relative to site-packages;
    empty where the project does not read `HTTPBIN_URL`."""
    if not reads_httpbin_url(project):
        return {}
    folder = f"{_DIST}-{_VERSION}.dist-info"
    files = {f"{_DIST}.py": _PLUGIN,
             f"{folder}/METADATA": f"Metadata-Version: 2.1\nName: {_DIST}\nVersion: {_VERSION}\nRequires-Dist: httpbin\n",
             f"{folder}/INSTALLER": "endstate\n",
             f"{folder}/entry_points.txt": f"[pytest11]\nendstate-httpbin = {_DIST}\n"}
    files[f"{folder}/RECORD"] = "".join(f"{path},,\n" for path in sorted(files)) + f"{folder}/RECORD,,\n"
    return {path: FileEntry(0o644, text.encode()) for path, text in files.items()}
