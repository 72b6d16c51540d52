"""LocalSandbox (bubblewrap): the same isolation promises, on the host."""

from __future__ import annotations

import shutil
import time

import msgspec
import pytest

from endstate.errors import SandboxUnavailable
from endstate.sandbox import FileEntry, LocalSandbox, SandboxHandle, SandboxLimits

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

CAP = 64 * 1024
LIMITS = SandboxLimits(command_timeout_s=30, output_cap_bytes=CAP)


@pytest.fixture(scope="module")
def box():
    with LocalSandbox("", LIMITS, "test-local") as sandbox:
        yield sandbox


def test_commands_run_in_workspace_with_fixed_environment(box):
    result = box.exec('id -u; pwd; hostname; echo "$TZ $LANG $LC_ALL $PYTHONHASHSEED $HOME"')
    assert result.ok, result
    assert result.stdout.splitlines() == [
        "1000", "/workspace", "sandbox", "UTC C.UTF-8 C.UTF-8 0 /home/agent"
    ]


def test_network_is_unreachable(box):
    result = box.exec("python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)'")
    assert result.exit_code != 0 and "unreachable" in result.stderr.lower()


def test_cannot_write_outside_the_workspace(box, tmp_path):
    for path in ("/etc/x", "/usr/x", "/x", f"{tmp_path}/x"):
        assert box.exec(f"echo hacked > {path}").exit_code != 0, path
    assert not (tmp_path / "x").exists()
    assert box.exec("ls /root /run /home").stdout.split() == ["/home:", "agent", "/root:", "/run:"]


def test_timeout_kills_the_command_and_its_children(box):
    result = box.exec("(sleep 1; touch /workspace/late) & while true; do sleep 0.1; done", timeout=0.5)
    assert result.timed_out and result.exit_code == 124
    assert result.duration_s < 3
    time.sleep(1.2)
    assert not (box.workspace / "late").exists()


def test_huge_output_is_capped(box):
    result = box.exec("yes | head -c 50000000")
    assert result.ok and result.truncated
    assert result.stdout.endswith(f"\n[endstate: output truncated: {50_000_000 - CAP} bytes dropped]\n")
    assert len(result.stdout) < CAP + 100


def test_tree_round_trip_and_files(box):
    tree = {"rt/run.sh": FileEntry(0o755, b"#!/bin/sh\necho ran\n"), "rt/d/b.bin": FileEntry(0o644, bytes(range(256)))}
    box.put_tree(tree)
    assert {p: e for p, e in box.get_tree().items() if p.startswith("rt/")} == tree
    assert box.exec("rt/run.sh && echo x >> rt/d/b.bin").stdout == "ran\n"
    box.write_file("rt/run.sh", b"#!/bin/sh\necho again\n")
    assert box.exec("rt/run.sh").stdout == "again\n"
    assert box.read_file("rt/run.sh") == b"#!/bin/sh\necho again\n"
    with pytest.raises(FileNotFoundError):
        box.read_file("rt/none")


def test_symlinks_never_lead_the_harness_out(box, tmp_path):
    box.exec(f"ln -s {tmp_path} out && ln -s /etc/hostname host")
    with pytest.raises(PermissionError):
        box.write_file("out/planted", b"x")
    with pytest.raises(PermissionError):
        box.read_file("host")
    assert not (tmp_path / "planted").exists()
    # The end state holds them as links, never as what they point at.
    tree = box.get_tree()
    assert tree["out"] == FileEntry.symlink(str(tmp_path)) and tree["host"] == FileEntry.symlink("/etc/hostname")


def test_attach_and_close(box):
    other = LocalSandbox.attach(msgspec.json.decode(msgspec.json.encode(box.handle()), type=SandboxHandle))
    other.write_file("attached.txt", b"via handle")
    assert box.read_file("attached.txt") == b"via handle"
    other.close()
    assert box.workspace.is_dir()

    sandbox = LocalSandbox("", LIMITS, "test-close")
    sandbox.exec("mkdir -p locked/in && touch locked/in/f && chmod 000 locked/in locked")
    sandbox.close()
    sandbox.close()
    assert not sandbox.workspace.exists()


def test_missing_bwrap_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="apt-get install -y bubblewrap"):
        LocalSandbox("", LIMITS, "test-missing")


def test_sealing_refuses_a_fifo_and_names_or_targets_that_are_not_utf8():
    from endstate.errors import SandboxError

    for made, named in (("printf x > $'bad\\xff.py'", "'bad\\\\xff.py' (a name that is not UTF-8)"),
                        ("ln -s $'/tmp/x\\xfe' l.py", "'l.py' (a link to '/tmp/x\\\\xfe', a target that is not UTF-8)"),
                        ("mkfifo pipe", "'pipe' (a fifo)")):
        with LocalSandbox("", LIMITS, "test-seal") as box:
            assert box.exec(made).ok, made
            box.get_tree()  # read anywhere but in sealing without a word
            with pytest.raises(SandboxError) as caught:
                box.get_tree(sealing=True)
            assert named in str(caught.value), caught.value
