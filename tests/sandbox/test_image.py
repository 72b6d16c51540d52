"""The sandbox image: its Dockerfile, and builds that are skipped when current."""

from __future__ import annotations

import re

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


@pytest.mark.docker
def test_a_build_that_fails_names_its_step_and_the_line_that_says_why(sandbox_image, tmp_path):
    from endstate.errors import SandboxUnavailable
    from endstate.sandbox import build_task_image

    noise = " && ".join(f"echo line-{n}" for n in range(40))
    (tmp_path / "Dockerfile").write_text(
        f"FROM {DEFAULT_IMAGE}\nRUN true\nRUN {noise} && python3 -c 'import sys; sys.exit(\"Error: no wheel for "
        f"blinker==1.4\")' && {noise}\n")
    with pytest.raises(SandboxUnavailable) as caught:
        build_task_image(tmp_path / "Dockerfile", "broken-build")
    said = str(caught.value)
    assert re.search(r"failed at Step 3/\d : RUN echo line-0 .*\.\.\. \(exit 1\): Error: no wheel for blinker==1.4$", said), said
    assert len(said) < 600 and "returned a non-zero code" not in said, said
