"""The in-sandbox shell scripts ship as package data, and the runner's status line is read by name."""

from __future__ import annotations

import subprocess

import pytest

from endstate.sandbox import _scripts
from endstate.sandbox._scripts import RunnerStatus, parse_status


@pytest.mark.parametrize("name", ["_RUNNER", "_READ", "_WRITE", "_TAR_FOLDER", "_UNTAR_AS_ROOT"])
def test_every_script_is_filled_in_and_parses_as_bash(name):
    text = getattr(_scripts, name)
    assert "@WATCHDOG_FIRED@" not in text and "@DISK_WATCH_FIRED@" not in text and "@ATIME@" not in text
    assert subprocess.run(["bash", "-n", "-c", text], capture_output=True).returncode == 0


def test_the_runner_reports_its_watchers_with_the_codes_the_parser_reads():
    assert f"fired={_scripts._WATCHDOG_FIRED}" in _scripts._RUNNER
    assert f"full={_scripts._DISK_WATCH_FIRED}" in _scripts._RUNNER


def test_a_status_line_is_read_into_named_fields():
    status = parse_status(b" 0\n", b" 12\nNONCE status 3 99 0 4096 1\n")
    assert status == RunnerStatus(out_dropped=0, err_dropped=12, exit_code=3, watchdog_fired=True,
                                  disk_watch_fired=False, workspace_bytes=4096, oom_kills=1)


@pytest.mark.parametrize("out, err", [(b"", b" 0\nN status 0 0 0 1 0\n"), (b" 0\n", b" 0\nN status 0 0 0 1\n"),
                                      (b" 0\n", b" 0\nN other 0 0 0 1 0\n"), (b" x\n", b" 0\nN status 0 0 0 1 0\n")])
def test_a_runner_that_did_not_end_as_it_does_reads_as_none(out, err):
    assert parse_status(out, err) is None
