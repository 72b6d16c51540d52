"""Sealing what an agent changed outside /workspace (endstate.sandbox._layer), in Docker.

A stopped container's writable layer is read under the sealed paths only (less what is
ignored): files with their modes and owners, links as links, deletions; its hash moves
with any of them; and a fresh grading container given the change holds exactly it.
"""

from __future__ import annotations

import io

import pytest

from endstate.errors import SandboxError
from endstate.sandbox import (
    DockerSandbox,
    FileEntry,
    SandboxLimits,
    SystemChange,
    apply_change,
    combined_hash,
    read_change,
    selected,
)

pytestmark = pytest.mark.docker

LIMITS = SandboxLimits(memory_mb=256, command_timeout_s=60)
PATHS, IGNORE = ["/srv/app", "/etc/skel"], ["/srv/app/cache"]


def _as(engine, box: DockerSandbox, user: str, command: str) -> str:
    ran = engine.containers.get(box.container_id).exec_run(["bash", "-c", command], user=user)
    assert ran.exit_code == 0, ran.output.decode()
    return ran.output.decode()


@pytest.fixture
def changed(sandbox_image, engine):
    """A stopped container in which root and the agent changed files in and out of the sealed paths."""
    with DockerSandbox(sandbox_image, LIMITS, "test-layer") as box:
        _as(engine, box, "root", "mkdir -p /srv/app/cache /srv/other && chmod 1777 /srv/app"
                                 " && printf 'port=8080\\n' > /srv/app/app.conf && chmod 600 /srv/app/app.conf"
                                 " && ln -s app.conf /srv/app/current && echo junk > /srv/app/cache/blob"
                                 " && echo elsewhere > /srv/other/file && rm /etc/skel/.bashrc")
        _as(engine, box, "1000", "echo mine > /srv/app/agent.txt && echo scratch > /tmp/scratch")
        box.stop()
        yield box


def test_only_the_sealed_paths_are_read_with_modes_owners_links_and_deletions(changed):
    change = read_change(changed, PATHS, IGNORE, max_bytes=1 << 20)
    assert sorted(change.files) == ["/srv/app/agent.txt", "/srv/app/app.conf", "/srv/app/current"]
    assert change.files["/srv/app/app.conf"] == FileEntry(0o600, b"port=8080\n")
    assert change.files["/srv/app/current"].link == "app.conf"
    assert change.owners["/srv/app/app.conf"] == (0, 0) and change.owners["/srv/app/agent.txt"] == (1000, 1000)
    assert change.deleted == ["/etc/skel/.bashrc"]
    assert read_change(changed, PATHS, IGNORE, max_bytes=1 << 20).hash() == change.hash()  # read twice, one hash


def test_a_change_past_the_byte_ceiling_is_refused(changed):
    with pytest.raises(SandboxError, match="holds more than 5 bytes"):
        read_change(changed, PATHS, IGNORE, max_bytes=5)


def test_the_grading_container_gets_exactly_the_change(changed, sandbox_image, engine):
    change = read_change(changed, PATHS, IGNORE, max_bytes=1 << 20)
    with DockerSandbox(sandbox_image, LIMITS, "test-layer-grading", grading=True) as grading:
        apply_change(grading, change)
        seen = _as(engine, grading, "root", "stat -c '%n %a %u' /srv/app/app.conf /srv/app/agent.txt;"
                                            " readlink /srv/app/current; cat /srv/app/app.conf;"
                                            " ls /srv/app/cache /srv/other /etc/skel/.bashrc 2>&1 | sort")
    assert seen.splitlines() == [
        "/srv/app/app.conf 600 0", "/srv/app/agent.txt 644 1000", "app.conf", "port=8080",
        "ls: cannot access '/etc/skel/.bashrc': No such file or directory",
        "ls: cannot access '/srv/app/cache': No such file or directory",
        "ls: cannot access '/srv/other': No such file or directory"]


def test_a_deletion_in_a_folder_only_the_agent_may_write_reaches_the_grading_container(sandbox_image, engine):
    """Root in a container may not write a folder it does not own: the deletion is made as its owner."""
    dockerfile = (f"FROM {sandbox_image}\nRUN mkdir -p /srv/owned && echo x > /srv/owned/file && echo y > /srv/owned/kept"
                  " && chown -R 1000:1000 /srv/owned && chmod 755 /srv/owned\n").encode()
    image, _ = engine.images.build(fileobj=io.BytesIO(dockerfile), tag="endstate-test-layer:1", rm=True)
    with DockerSandbox(image.tags[0], LIMITS, "test-layer-owned") as box:
        _as(engine, box, "1000", "rm /srv/owned/file")
        box.stop()
        change = read_change(box, ["/srv/owned"], [], max_bytes=1 << 20)
    assert change.deleted == ["/srv/owned/file"] and not change.files
    with DockerSandbox(image.tags[0], LIMITS, "test-layer-owned-grading", grading=True) as grading:
        apply_change(grading, change)
        assert _as(engine, grading, "root", "ls /srv/owned").split() == ["kept"]


def test_the_hash_moves_with_bytes_modes_owners_and_deletions():
    base = SystemChange(files={"/etc/a": FileEntry(0o644, b"x")}, owners={"/etc/a": (0, 0)}, deleted=["/etc/b"])
    variants = [
        SystemChange(files={"/etc/a": FileEntry(0o644, b"y")}, owners={"/etc/a": (0, 0)}, deleted=["/etc/b"]),
        SystemChange(files={"/etc/a": FileEntry(0o600, b"x")}, owners={"/etc/a": (0, 0)}, deleted=["/etc/b"]),
        SystemChange(files={"/etc/a": FileEntry(0o644, b"x")}, owners={"/etc/a": (1000, 0)}, deleted=["/etc/b"]),
        SystemChange(files={"/etc/a": FileEntry(0o644, b"x")}, owners={"/etc/a": (0, 0)}),
    ]
    hashes = {base.hash(), *(v.hash() for v in variants)}
    assert len(hashes) == 5
    assert combined_hash("w1", base) != combined_hash("w2", base)


def test_endstates_own_folders_are_never_sealed():
    assert selected("/etc/nginx/nginx.conf", ["/"], [])
    for path in ("/workspace/x", "/tmp/x", "/proc/1/status", "/opt/endstate-verifier/bin/apt", "/logs/verifier/reward.txt"):
        assert not selected(path, ["/"], []), path
    assert not selected("/var/log/x", ["/"], ["/var/log"])
    assert not selected("/etc/nginxx/a", ["/etc/nginx"], [])
