"""The sandbox image: its Dockerfile, and builds that are skipped when current."""

from __future__ import annotations

import pytest

from endstate.sandbox import DEFAULT_IMAGE, build_image
from endstate.sandbox._image import DOCKERFILE_LABEL, base_image, dockerfile_sha256


def test_base_image_is_the_first_from(tmp_path):
    assert base_image() == "debian:bookworm-slim"
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("# comment\nfrom --platform=linux/amd64 debian:trixie AS base\nFROM base\n")
    assert base_image(dockerfile) == "debian:trixie"


def test_offline_seed_is_checked():
    with pytest.raises(ValueError, match="auto, always, never"):
        build_image(offline_seed="sometimes")


@pytest.mark.docker
def test_current_image_is_not_rebuilt(engine, sandbox_image):
    assert sandbox_image == DEFAULT_IMAGE
    image = engine.images.get(DEFAULT_IMAGE)
    assert image.labels[DOCKERFILE_LABEL] == dockerfile_sha256()
    said: list[str] = []
    assert build_image(DEFAULT_IMAGE, log=said.append) == image.id
    assert said == [f"{DEFAULT_IMAGE} is up to date ({image.id[:19]})"]
