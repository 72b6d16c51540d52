"""A replay of a recording made with --attempts K, run without it, replays the first attempt only: said."""

from __future__ import annotations

import types

import pytest
from cli_runner import run_endstate

from endstate.cli._preflight import attempts_left_out
from endstate.run import read_results


def test_later_attempts_in_the_folder_are_named_with_the_option_that_replays_them(tmp_path):
    tasks = [types.SimpleNamespace(id="alpha"), types.SimpleNamespace(id="beta"), types.SimpleNamespace(id="alp")]
    for name in ("alpha", "alpha.attempt-1", "alpha.attempt-2", "beta", "beta.attempt-1", "alp.attempt-x"):
        (tmp_path / f"{name}.cassette").write_bytes(b"")
    said = attempts_left_out(tmp_path, tasks, 1)
    assert said == (f"{tmp_path} holds up to 3 attempts of 2 task(s) (e.g. alpha.attempt-1.cassette), and "
                    "--attempts 1 replays the first 1: pass --attempts 3 to replay every one")
    assert attempts_left_out(tmp_path, tasks, 2).startswith(f"{tmp_path} holds up to 3 attempts of 1 task(s)")
    assert attempts_left_out(tmp_path, tasks, 3) == ""
    assert attempts_left_out(tmp_path / "none", tasks, 1) == ""


@pytest.mark.docker
def test_a_replay_without_the_recordings_attempts_says_so_and_replays_the_first(tmp_path):
    recorded = run_endstate("record", "--model", "scripted/reference", "--task", "bugfix-lru-eviction", "--attempts",
                            "2", "--cassettes", str(tmp_path / "c"), "--out", str(tmp_path / "rec"))
    assert recorded.code == 0, recorded
    ran = run_endstate("eval", "--replay", str(tmp_path / "c"), "--task", "bugfix-lru-eviction", "--out",
                       str(tmp_path / "replay"))
    assert ran.code == 0, ran
    assert f"endstate: note: {tmp_path / 'c'} holds up to 2 attempts of 1 task(s)" in ran.err, ran
    assert "pass --attempts 2 to replay every one" in ran.err
    assert read_results(tmp_path / "replay").vector == [("bugfix-lru-eviction", "pass")]
