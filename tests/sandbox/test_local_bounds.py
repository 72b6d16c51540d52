"""What the local (bubblewrap) backend bounds, and its file tools' refusals."""

from __future__ import annotations

import shutil

import pytest

from endstate.agent._tools import ToolError, run_tool
from endstate.errors import WorkspaceFull
from endstate.sandbox import LocalSandbox, SandboxLimits

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

MIB = 1024 * 1024
LIMITS = SandboxLimits(command_timeout_s=30, workspace_mb=48, tmp_mb=16, file_mb=24)


@pytest.fixture
def box():
    with LocalSandbox("", LIMITS, "test-local-bounds") as sandbox:
        yield sandbox


@pytest.mark.alone  # fills each place to its limit; once, beside the Docker tests, its command printed nothing
def test_tmp_and_home_are_small_tmpfs_and_files_have_a_size_limit(box):
    for folder in ("/tmp", "/home/agent"):
        result = box.exec(f"head -c 40M /dev/zero > {folder}/fill; stat -c %s {folder}/fill")
        assert result.stdout.strip().isdigit(), (folder, result)
        assert int(result.stdout) <= LIMITS.tmp_mb * MIB, folder
    box.exec("dd if=/dev/zero of=big bs=1M count=100")
    assert (box.workspace / "big").stat().st_size == LIMITS.file_mb * MIB
    assert box.exec("ulimit -f unlimited").exit_code != 0


def test_a_workspace_past_its_ceiling_ends_the_command(box):
    with pytest.raises(WorkspaceFull, match="ceiling of 48 MiB"):
        box.exec("for i in 1 2 3; do dd if=/dev/zero of=f$i bs=1M count=20 2>/dev/null; done")


def test_links_out_of_the_workspace_are_tool_errors(box, tmp_path):
    (tmp_path / "outside.txt").write_text("host file\n")
    box.exec(f"ln -s /etc/shadow shadow && ln -s {tmp_path}/outside.txt outside && echo hi > inner.txt"
             " && ln -s inner.txt alias")
    for link in ("shadow", "outside"):
        with pytest.raises(ToolError, match="out of the workspace"):
            run_tool(box, "read_file", {"path": link}, timeout=10)
    assert run_tool(box, "read_file", {"path": "alias"}, timeout=10) == "hi\n"
