"""What a run writes is never lost: an --out holding another run is refused unless told,
and a folder that refuses the bytes is one line, with what was finished kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e_helpers import CASSETTES, endstate

TASK = "bugfix-lru-eviction"
# No engine answers here: a command that got past its checks would stop on that instead.
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}


def no_traceback(ran) -> None:
    assert "Traceback" not in ran.out + ran.err, ran


def _one_line(ran, needle: str) -> str:
    [line] = [line for line in ran.err.splitlines() if needle in line]
    return line


@pytest.mark.parametrize("arm", ["live", "replay"])
@pytest.mark.parametrize("held", ["results.json", "run.json", "run-2/results.json"])
def test_eval_refuses_an_out_that_holds_another_run(tmp_path, arm, held):
    out = tmp_path / "out"
    (out / held).parent.mkdir(parents=True)
    (out / held).write_text('{"tasks": ["the known-fix arm"]}\n')
    replay = ("--replay", str(CASSETTES / "scripted-null")) if arm == "replay" else ()
    ran = endstate("eval", "--model", "scripted/null", "--task", TASK, "--out", str(out), *replay, env=NO_ENGINE)
    assert ran.code == 2, ran
    line = _one_line(ran, "already holds a run")
    assert str(out) in line and "--overwrite" in line and "--resume" in line, line
    assert (out / held).read_text() == '{"tasks": ["the known-fix arm"]}\n'  # nothing finished was lost
    no_traceback(ran)


def test_eval_overwrite_or_an_empty_out_gets_past_the_check(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("not a run\n")  # a folder without a run is no run to protect
    ran = endstate("eval", "--model", "scripted/null", "--task", TASK, "--out", str(out), env=NO_ENGINE)
    assert "already holds a run" not in ran.err and "none answers" in ran.err, ran
    (out / "results.json").write_text("{}\n")
    ran = endstate("eval", "--model", "scripted/null", "--task", TASK, "--out", str(out), "--overwrite", env=NO_ENGINE)
    assert "already holds a run" not in ran.err and "none answers" in ran.err, ran
