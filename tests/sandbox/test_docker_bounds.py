"""What a Docker sandbox bounds (disk, files, memory) and what its file tools may touch."""

from __future__ import annotations

import time

import pytest

from endstate.agent._tools import ToolError, run_tool
from endstate.errors import WorkspaceFull
from endstate.sandbox import DockerSandbox, SandboxLimits

pytestmark = pytest.mark.docker

MIB = 1024 * 1024
LIMITS = SandboxLimits(memory_mb=256, command_timeout_s=60, workspace_mb=64, tmp_mb=16, file_mb=24)


@pytest.fixture
def box(sandbox_image: str):
    with DockerSandbox(sandbox_image, LIMITS, "test-bounds") as sandbox:
        yield sandbox


def _size(box, path: str) -> int:
    return int(box.exec(f"stat -c %s {path}").stdout)


def test_places_outside_the_workspace_are_small_tmpfs(box):
    for folder in ("/tmp", "/var/tmp", "/home/agent", "/dev/shm"):
        result = box.exec(f"head -c 40M /dev/zero > {folder}/fill; echo $?")
        assert result.stdout.strip() != "0", folder
        assert "No space left on device" in result.stderr or "File size limit" in result.stderr, result
        assert _size(box, f"{folder}/fill") <= LIMITS.tmp_mb * MIB, folder


def test_no_command_writes_a_file_past_the_limit(box):
    result = box.exec("dd if=/dev/zero of=big bs=1M count=100")
    assert result.exit_code != 0
    assert _size(box, "big") == LIMITS.file_mb * MIB
    raised = box.exec("ulimit -f unlimited")  # the agent cannot lift it
    assert raised.exit_code != 0


def test_a_workspace_past_its_ceiling_ends_the_command_and_says_so(box):
    with pytest.raises(WorkspaceFull, match="ceiling of 64 MiB"):
        box.exec("for i in 1 2 3 4; do dd if=/dev/zero of=f$i bs=1M count=20 2>/dev/null; done")


def test_the_ceiling_is_watched_while_a_command_runs(box, as_root):
    started = time.monotonic()
    with pytest.raises(WorkspaceFull):
        box.exec("(while :; do head -c 4M /dev/zero > bg$RANDOM$RANDOM; sleep 0.05; done) & "
                 "i=0; while :; do head -c 4M /dev/zero > f$i; i=$((i+1)); sleep 0.05; done")
    assert time.monotonic() - started < 15, "the command should end long before its 60 s timeout"
    assert as_root(box.handle(), "pgrep -u agent -c")[1].strip() == "0", "every agent process is killed"
    with pytest.raises(WorkspaceFull):  # and it stays full: every later command says so
        box.exec("true")


def test_a_command_killed_for_memory_says_so(box):
    result = box.exec("python3 -c 'b = bytearray(600 * 1024 * 1024)'")
    assert result.exit_code == 137 and result.oom_killed
    assert "killed: out of memory" in result.stderr
    fine = box.exec("echo fine")
    assert fine.ok and not fine.oom_killed and fine.stderr == ""


def test_file_tools_act_as_the_agent_and_stay_in_the_workspace(box, as_root):
    box.exec("ln -s /etc/shadow shadow && ln -s /etc/hostname hostname && ln -s ../etc escape")
    for link in ("shadow", "hostname", "escape/passwd"):
        with pytest.raises(PermissionError, match="outside the workspace"):
            box.read_file(link)
    box.exec("echo private > secret && chmod 000 secret")  # the engine (root) could read it; the agent cannot
    with pytest.raises(PermissionError, match="secret: Permission denied"):
        box.read_file("secret")

    box.write_file("pkg/run.sh", b"#!/bin/sh\necho one\n")
    box.exec("chmod +x pkg/run.sh && ln -s pkg/run.sh alias")
    assert box.read_file("alias") == b"#!/bin/sh\necho one\n"
    box.write_file("alias", b"#!/bin/sh\necho two\n")  # a link inside the workspace is written through
    assert box.exec("./pkg/run.sh").stdout == "two\n"  # and the script stays executable
    assert box.exec("stat -c '%a %U %Y' pkg/run.sh").stdout.split() == ["755", "agent", "946684800"]

    with pytest.raises(PermissionError, match="outside the workspace"):
        box.write_file("hostname", b"planted\n")
    with pytest.raises(PermissionError, match="outside the workspace"):
        box.write_file("escape/planted", b"planted\n")
    assert as_root(box.handle(), "cat /etc/hostname")[1].strip() == "sandbox"
    with pytest.raises(PermissionError, match="secret: Permission denied"):
        box.write_file("secret", b"overwritten\n")
    assert box.exec("chmod 600 secret && cat secret").stdout == "private\n"


def test_the_model_reads_a_refusal_as_a_tool_error(box):
    box.exec("ln -s /etc/shadow x")
    for name, args in (("read_file", {"path": "x"}), ("write_file", {"path": "x", "content": "y"}),
                       ("edit_file", {"path": "x", "old": "root", "new": "toor"})):
        with pytest.raises(ToolError, match="x resolves to /etc/shadow, outside the workspace: refused"):
            run_tool(box, name, args, timeout=10)


def test_a_command_is_the_memory_cgroups_first_choice_not_its_runner(box):
    """An end state that fills its memory must lose its own processes, not the runner that reports
    on them (a dead runner is the harness's error; a killed command is the end state's failure)."""
    assert box.exec("cat /proc/self/oom_score_adj").stdout.strip() == "1000"
