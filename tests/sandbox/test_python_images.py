"""The image of a task's Python from a registry the user names: a real registry (Debian's
`docker-registry`, started on loopback by the test) serving an image in the official images' layout
(`<prefix>/python:3.9`), which endstate pulls and builds its Python image on."""

from __future__ import annotations

import docker.errors
import pytest
from loopback import docker_registry

from endstate.errors import SandboxUnavailable
from endstate.sandbox import build_python_image, python_source

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def registry(tmp_path):
    """`127.0.0.1:PORT`, a registry on loopback with its storage under tmp_path."""
    with docker_registry(tmp_path) as address:
        yield address


def test_the_python_image_is_pulled_from_the_registry_the_user_names(registry, engine):
    # Stand-in for the official python:3.9 (Docker Hub is out of reach here): endstate's own 3.9 image,
    # pushed under the official images' name.
    debian = build_python_image(python_source("3.9", registry=""))
    official = f"{registry}/library/python:3.9"
    engine.images.get(debian).tag(official)
    for line in engine.images.push(official, stream=True, decode=True):
        assert "error" not in line, line
    engine.images.remove(official)
    try:
        source = python_source("3.9", registry=f"{registry}/library")
        assert source.tag == "endstate-python:3.9-registry" and source.said() == f"Python 3.9 from the image {official}"

        assert build_python_image(source) == source.tag

        out = engine.containers.run(source.tag, ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                    remove=True, network_mode="none", user="agent")
        assert out.decode().strip() == "3.9"
        assert engine.images.get(source.tag).labels["endstate.python-source"] == source.said()
        with pytest.raises(SandboxUnavailable, match=rf"cannot pull {registry}/elsewhere/python:3.9 .*name a registry"):
            build_python_image(python_source("3.9", registry=f"{registry}/elsewhere"))
    finally:
        for tag in ("endstate-python:3.9-registry", official):
            try:
                engine.images.remove(tag)
            except docker.errors.ImageNotFound:
                pass
