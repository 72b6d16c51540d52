"""Sandboxes of one process share one Docker client; a forked child makes its own."""

from __future__ import annotations

import os

import pytest

from endstate.sandbox import DEFAULT_IMAGE, DockerSandbox
from endstate.sandbox._engine import shared_client as _shared_client

pytestmark = pytest.mark.docker


def test_sandboxes_of_one_process_share_one_client():
    with DockerSandbox(DEFAULT_IMAGE, name_hint="test-shared-client") as made:
        attached = DockerSandbox.attach(made.handle())
        with DockerSandbox(DEFAULT_IMAGE, name_hint="test-shared-client") as other:
            assert made._client is attached._client is other._client
            assert other.exec("true").exit_code == 0 and attached.exec("true").exit_code == 0


def test_a_forked_child_does_not_use_its_parents_client():
    parent = _shared_client()
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if it got a client of its own that answers
        try:
            child = _shared_client()
            os._exit(0 if child is not parent and child.ping() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _shared_client() is parent


def test_a_later_client_reuses_the_api_version_the_first_one_learnt(monkeypatch):
    """Asking the engine for its version runs two programs in the daemon; a run's workers
    (forked from a server started after the first client) take it from the environment."""
    from docker.api.client import APIClient

    from endstate.sandbox._engine import API_VERSION_ENV, connect, engine_url

    monkeypatch.delenv(API_VERSION_ENV, raising=False)
    learnt = connect().api.api_version
    assert os.environ[API_VERSION_ENV] == f"{engine_url()} {learnt}"

    def asked(self):
        raise AssertionError("the engine was asked for its version again")

    monkeypatch.setattr(APIClient, "_retrieve_server_version", asked)
    assert connect().api.api_version == learnt
    # What was learnt for another engine is not used for this one.
    monkeypatch.setenv(API_VERSION_ENV, f"tcp://elsewhere:2375 {learnt}")
    with pytest.raises(AssertionError, match="asked for its version"):
        connect()
