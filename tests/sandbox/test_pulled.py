"""Images pinned by digest, and files read out of an image (the registry itself: tests/e2e/test_swebench_images.py)."""

from __future__ import annotations

import pytest

from endstate.sandbox import DEFAULT_IMAGE, run_in_image
from endstate.sandbox._pulled import _repository


@pytest.mark.parametrize("reference, repository", [
    ("127.0.0.1:5000/swebench/x:latest", "127.0.0.1:5000/swebench/x"),
    ("127.0.0.1:5000/swebench/x@sha256:" + "a" * 64, "127.0.0.1:5000/swebench/x"),
    ("docker.io/swebench/x@sha256:" + "a" * 64, "swebench/x"),
    ("swebench/x", "swebench/x"),
])
def test_a_reference_s_repository_keeps_the_registry_s_port(reference, repository):
    assert _repository(reference) == repository


@pytest.mark.docker
def test_a_script_run_in_an_image_leaves_files_to_read_or_says_why_it_failed():
    status, said, files = run_in_image(DEFAULT_IMAGE, "id -u > /tmp/who; printf 'a\\0b' > /tmp/raw", ["/tmp/who", "/tmp/raw"])
    assert (status, said, files) == (0, "", [b"0\n", b"a\0b"])  # as root, bytes as written
    status, said, files = run_in_image(DEFAULT_IMAGE, "echo first >&2; echo no /testbed here >&2; exit 3", ["/tmp/x"])
    assert (status, said, files) == (3, "no /testbed here", [])
