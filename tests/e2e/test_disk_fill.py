"""An agent that tries to fill the disk fails its task, with a reason, in bounded time."""

from __future__ import annotations

import json
import time

import pytest
from cli_runner import run_endstate
from e2e_helpers import disk_fill_suite

pytestmark = [pytest.mark.docker, pytest.mark.alone]


def test_a_disk_filling_trajectory_fails_with_a_reason_in_bounded_time(tmp_path):
    suite = disk_fill_suite(tmp_path / "suite")
    started = time.monotonic()
    ran = run_endstate("eval", "--suite", str(suite), "--model", "scripted/reference", "--out", str(tmp_path / "out"))
    elapsed = time.monotonic() - started
    assert ran.code == 0, ran  # a task that fails is a result, not an error of the run
    assert elapsed < 120, f"took {elapsed:.0f} s"
    [task] = json.loads((tmp_path / "out" / "results.json").read_text())["tasks"]
    assert (task["outcome"], task["stop_reason"], task["failing_grader"]) == ("fail", "disk_limit", "disk_limit")
    assert "the workspace grew past its ceiling of 512 MiB" in task["reason"]
    assert task["tree_hash"] == ""  # the oversized end state was never read
    transcript = (tmp_path / "out" / "transcripts" / "disk-fill.json").read_text()
    assert transcript.count("a file reached the size limit of 256 MiB") == 2  # /tmp, then the workspace
