"""Choosing a backend, and what the sandbox package exports."""

from __future__ import annotations

import shutil

import pytest

import endstate.sandbox as sandbox_pkg
from endstate.errors import SandboxUnavailable
from endstate.sandbox import LocalSandbox, connect, open_sandbox, resolve_backend


def test_public_names():
    assert set(sandbox_pkg.__all__) == {
        "Sandbox", "ExecResult", "SandboxLimits", "WORKDIR", "SealedSandbox", "seal", "Tree",
        "FileEntry", "tree_hash", "load_dir", "open_sandbox", "resolve_backend", "BACKENDS",
        "DockerSandbox", "LocalSandbox", "build_image", "DEFAULT_IMAGE", "reap",
        "build_context", "image_label", "image_python", "remove_run_containers",
        "HOSTNAME", "SANDBOX_ENV", "output_text", "SNAPSHOT_MAX_BYTES", "matches_any", "without_caches",
        "cache_paths", "TimedSandbox", "RESTRICT", "VCS_DIRS", "overlay", "tar_to_tree", "tree_to_tar", "connect", "engine_answers",
        "engine_configured", "LABEL",
        "build_task_image", "image_id", "resolve_requirements", "EngineWatch", "RUN_LABEL", "machinery_fault",
        "SandboxHandle", "DockerHandle", "LocalHandle", "attach",
        "SealSpec", "SystemChange", "read_change", "apply_change", "combined_hash", "selected",
        "HARNESS_PROGRAMS", "harness_path", "agent_processes", "start_sealed", "LIST_SERVICES", "unrestartable",
        "bound_end_state", "release_end_state",
        "services_interfered", "RUNTIME", "TOOLBOX_BUILD", "runtime_volume", "RuntimeGuards",
        "SANDBOX_PYTHON", "SANDBOX_GLIBC", "DATED_INDEX", "built_root", "ProjectCopy", "SYSTEM_PACKAGES", "Process",
        "PullFailed", "pull_pinned",
        "run_in_image",
        "python_of", "wheelhouse", "build_wheel_in_image", "PYTHON_IMAGE", "PythonSource", "build_python_image",
        "python_source", "docker_cli", "has_wheel", "Healthcheck", "healthy", "wait_healthy",
    }
    assert all(hasattr(sandbox_pkg, name) for name in sandbox_pkg.__all__)


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(SandboxUnavailable, match="'podman'.*auto, docker, local"):
        open_sandbox("podman")


def test_a_configured_engine_that_does_not_answer_is_an_error_not_a_fallback(monkeypatch, tmp_path):
    from endstate.sandbox import _engine

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailable, match="no Docker engine answers at unix:///nonexistent/docker.sock"):
        connect(timeout=2)
    with pytest.raises(SandboxUnavailable, match=r"configured \(DOCKER_HOST=unix:///nonexistent/docker.sock\) "
                                                 r"but none answers.*--sandbox local"):
        resolve_backend("auto")
    # Asked for by name, a missing engine is the user's error, said before any task starts.
    with pytest.raises(SandboxUnavailable, match="start dockerd or use --sandbox local"):
        resolve_backend("docker")
    # No DOCKER_HOST, but the default socket is there (an engine that died): an error too.
    monkeypatch.delenv("DOCKER_HOST")
    stale = tmp_path / "docker.sock"
    stale.touch()
    monkeypatch.setattr(_engine, "DEFAULT_SOCKET", str(stale))
    with pytest.raises(SandboxUnavailable, match=f"configured \\({stale} exists\\)"):
        resolve_backend("auto")


def test_with_no_engine_anywhere_auto_runs_locally_and_says_so(monkeypatch, tmp_path, capsys):
    from endstate.sandbox import _engine

    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setattr(_engine, "DEFAULT_SOCKET", str(tmp_path / "no-engine.sock"))
    assert resolve_backend("auto") == "local"
    said = capsys.readouterr().err
    assert "no Docker engine on this machine" in said and "local bubblewrap backend" in said, said


def test_opening_a_docker_sandbox_with_no_engine_is_explained(monkeypatch):
    """open_sandbox does not probe a backend asked for by name: the clear error comes from
    the sandbox's own connection."""
    from endstate.sandbox import _engine

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setattr(_engine, "_SHARED", {})  # no client of this process made before the engine went
    with pytest.raises(SandboxUnavailable, match="no Docker engine answers at unix:///nonexistent/docker.sock.*"
                                                 "start dockerd or use --sandbox local"):
        open_sandbox("docker", name_hint="no-engine")


@pytest.mark.docker
def test_auto_picks_docker_when_an_engine_answers():
    assert resolve_backend("auto") == "docker"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_open_local():
    with open_sandbox("local", name_hint="open") as sandbox:
        assert isinstance(sandbox, LocalSandbox)
        assert sandbox.describe()["backend"] == "local"
        assert sandbox.exec("echo hi").stdout == "hi\n"


def test_a_handle_travels_as_json_tagged_by_its_backend():
    import msgspec

    from endstate.sandbox import DockerHandle, LocalHandle, SandboxHandle, SandboxLimits

    docker_handle = DockerHandle(SandboxLimits(pids=64), container="c0ffee", image="img", image_id="sha256:1")
    data = msgspec.json.encode(docker_handle)
    assert msgspec.json.decode(data)["backend"] == "docker"  # job files keep the field they always had
    assert msgspec.json.decode(data, type=SandboxHandle) == docker_handle
    local = msgspec.json.decode(b'{"backend": "local", "workspace": "/w"}', type=SandboxHandle)
    assert isinstance(local, LocalHandle) and local.workspace == "/w"
    with pytest.raises(msgspec.ValidationError, match="backend"):
        msgspec.json.decode(b'{"backend": "k8s"}', type=SandboxHandle)
