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
points HTTPBIN_URL at it, for tests that would otherwise reach httpbin.org (the sandbox has no network).
Served by the standard library's WSGI server, keeping connections as httpbin.org's did."""
import io
import os
import threading
import warnings
from socketserver import ThreadingMixIn
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer

with warnings.catch_warnings():  # Werkzeug 2.2 compiles httpbin's routes with what Python 3.12 deprecates
    warnings.simplefilter("ignore")
    import httpbin

_served = []


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client gone mid-request is the test's business, not a traceback on its output


class _Response(ServerHandler):
    """HTTP/1.1, the connection kept and said kept (`Connection: keep-alive`) as httpbin.org's server did,
    where the client asked no close and the response has a length; else said closed, and closed."""

    http_version = "1.1"

    def cleanup_headers(self):
        super().cleanup_headers()
        asker = self.request_handler
        keep = not asker.close_connection and "Content-Length" in self.headers
        self.headers["Connection"] = "keep-alive" if keep else "close"
        asker.close_connection = not keep

    def write(self, data):
        super().write(bytes(data))  # httpbin's /bytes answers a bytearray, which wsgiref refuses


class _Handler(WSGIRequestHandler):
    """Reads each request's body whole before httpbin sees it, as the proxy in front of httpbin.org did: a
    chunked upload is handed over with its length (httpbin refuses chunked input from any server but
    gunicorn), and no unread body is left on a kept connection."""

    protocol_version = "HTTP/1.1"

    def handle(self):
        self.close_connection = True
        self.handle_one()
        while not self.close_connection:
            self.handle_one()

    def handle_one(self):
        self.close_connection = True
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline or len(self.raw_requestline) > 65536 or not self.parse_request():
            return
        environ = self.get_environ()
        try:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                body = self._dechunked()
                environ.pop("HTTP_TRANSFER_ENCODING", None)
            else:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        except ValueError:
            self.send_error(400, "malformed body")
            self.close_connection = True
            return
        environ["CONTENT_LENGTH"] = str(len(body))
        response = _Response(io.BytesIO(body), self.wfile, self.get_stderr(), environ, multithread=True)
        response.request_handler = self
        response.run(self.server.get_app())

    def _dechunked(self):
        body = b""
        while True:
            size = int(self.rfile.readline(65537).split(b";")[0].strip(), 16)
            if not size:
                while self.rfile.readline(65537).strip():  # trailers
                    pass
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def log_message(self, *args):
        pass


def _server():
    try:
        server = _Server(({LOOPBACK_HTTPBIN[0]!r}, {LOOPBACK_HTTPBIN[1]}), _Handler)
    except OSError:  # taken by another test process in this network namespace
        server = _Server(({LOOPBACK_HTTPBIN[0]!r}, 0), _Handler)
    app = httpbin.app
    if app.config.get("JSONIFY_PRETTYPRINT_REGULAR") is not None and hasattr(app, "json"):
        # Flask 2.2 warns of that key at each JSON response: under a project's `filterwarnings = error` the
        # warning, raised in this thread, would be a 500 of httpbin's. Said the way Flask asks instead.
        app.json.compact = not app.config["JSONIFY_PRETTYPRINT_REGULAR"]
        app.config["JSONIFY_PRETTYPRINT_REGULAR"] = None
    server.set_app(app)
    return server


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
    # flasgger 0.9.5, httpbin's dependency (its last wheel), imports what Flask 2.3 removed (flask.Markup); Flask
    # 2.2 with the Werkzeug of its time (Werkzeug 3 removed what Flask 2.2's test client reads).
    return ["httpbin", "flask<2.3", "werkzeug<2.3"] if reads_httpbin_url(project) else []


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
