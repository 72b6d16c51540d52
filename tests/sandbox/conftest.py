"""The sandbox image, built once per session (a no-op when it is already current)."""

from __future__ import annotations

import docker
import pytest

from endstate.sandbox import DEFAULT_IMAGE, DockerHandle, build_image


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    build_image(DEFAULT_IMAGE)
    return DEFAULT_IMAGE


@pytest.fixture(scope="session")
def engine() -> docker.DockerClient:
    """A plain SDK client, for looking at containers from outside the sandbox API."""
    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture(scope="session")
def as_root(engine: docker.DockerClient):
    """Run a command as root in a sandbox's container, bypassing the sandbox API."""

    def run(handle: DockerHandle, command: str) -> tuple[int, str]:
        result = engine.containers.get(handle.container).exec_run(["bash", "-c", command], user="root")
        return result.exit_code, result.output.decode()

    return run
