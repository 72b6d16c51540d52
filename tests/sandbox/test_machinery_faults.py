"""Faults of the machinery are named for what they are; everything else is not one."""

from __future__ import annotations

import errno

import docker.errors
import pytest
import requests.exceptions

from endstate.errors import SandboxError
from endstate.sandbox._faults import EngineWatch, machinery_fault


def chained(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as exc:
            raise outer from exc
    except Exception as exc:
        return exc


class Response:
    def __init__(self, status: int) -> None:
        self.status_code = status
        self.reason = "x"
        self.url = "http+docker://localhost/v1.45/containers/abc/exec"


@pytest.mark.parametrize("exc, says", [
    (requests.exceptions.ConnectionError(("Connection aborted.", FileNotFoundError(2, "No such file"))),
     "the connection to the Docker engine broke"),
    (ConnectionResetError(104, "reset by peer"), "the connection to the Docker engine broke"),
    (docker.errors.NotFound("No such container: abc", response=Response(404), explanation="No such container: abc"),
     "a sandbox container vanished (No such container: abc)"),
    (docker.errors.APIError("500", response=Response(500), explanation="container is restarting"),
     "the Docker engine refused a call (container is restarting)"),
    (docker.errors.APIError("500", response=Response(500), explanation="write /var/lib/docker/x: no space left on device"),
     "the Docker engine's disk is full"),
    (docker.errors.APIError("409", response=Response(409), explanation="Container abc is not running"),
     "a sandbox container was stopped under the task (Container abc is not running)"),
    (OSError(errno.ENOSPC, "No space left on device", "/runs/x/results.json"), "the host's disk is full (/runs/x/results.json)"),
    (chained(SandboxError("reading the tree failed"), requests.exceptions.ConnectionError("aborted")),
     "the connection to the Docker engine broke"),
])
def test_machinery_faults_are_named_in_one_line(exc, says):
    cause = machinery_fault(exc)
    assert cause is not None and cause.startswith(says) and "\n" not in cause and len(cause) <= 160


@pytest.mark.parametrize("exc", [
    ValueError("a bug of ours"),
    KeyError("x"),
    SandboxError("command runner died"),
    docker.errors.APIError("400", response=Response(400), explanation="bad parameter"),
    docker.errors.ImageNotFound("no such image", response=Response(404)),
    OSError(errno.EACCES, "Permission denied"),
])
def test_other_errors_are_not_machinery_faults(exc):
    assert machinery_fault(exc) is None


def test_a_restarted_engine_is_told_by_its_new_socket(tmp_path, monkeypatch):
    import socket

    path = tmp_path / "engine.sock"
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    watch = EngineWatch()
    assert watch.identity() is None
    first = socket.socket(socket.AF_UNIX)
    first.bind(str(path))
    before = watch.identity()
    monkeypatch.setattr(EngineWatch, "answers", lambda self, timeout=5.0: True)
    assert before is not None and watch.fault_since(before) is None
    first.close()
    path.unlink()
    second = socket.socket(socket.AF_UNIX)
    second.bind(str(path))
    try:
        assert watch.fault_since(before) == f"the Docker engine at unix://{path} restarted during the task"
    finally:
        second.close()
    monkeypatch.setattr(EngineWatch, "answers", lambda self, timeout=5.0: False)
    assert watch.fault_since(None) == f"the Docker engine at unix://{path} does not answer"
