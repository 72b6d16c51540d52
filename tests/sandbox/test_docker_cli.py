"""The docker program, reached through the sandbox package only: every container it makes carries
the owner labels the reaper reads, and its failures are one line."""

from __future__ import annotations

import json
import os

import pytest

from endstate.errors import SandboxUnavailable
from endstate.sandbox import DEFAULT_IMAGE, LABEL, docker_cli
from endstate.sandbox._reaper import owner_alive


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["create", "run"])
def test_each_kind_of_container_the_docker_program_makes_is_labelled_as_ours(kind):
    name = f"endstate-test-cli-{kind}-{os.getpid()}"
    try:
        made = docker_cli(kind, "--name", name, "--network", "none", "--entrypoint", "true", DEFAULT_IMAGE, why="test")
        assert made.returncode == 0, made.stderr
        shown = docker_cli("inspect", "--format", "{{json .Config.Labels}}", name, why="test")
        labels = json.loads(shown.stdout)
        assert labels[LABEL] == "1"
        assert owner_alive(labels) is True  # the reaper leaves it to this live process, and reaps it after
    finally:
        docker_cli("rm", "-f", name, why="test")


def test_a_missing_docker_program_is_one_line_naming_what_was_being_done(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailable) as caught:
        docker_cli("build", ".", why="the Harbor import builds each task's image")
    assert str(caught.value) == "the Harbor import builds each task's image: install the docker client"
