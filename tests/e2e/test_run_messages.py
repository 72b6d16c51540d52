"""What a run says: a mistyped task gets its closest name, bad inputs are refused before any
sandbox, a resume says what it kept, a run on bubblewrap says so and why."""

from __future__ import annotations

import json
import shutil

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, TASKS

TASK = "bugfix-lru-eviction"
# No engine answers here: a command that got past its checks would stop on that instead.
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}


def _one_line(ran, needle: str) -> str:
    [line] = [line for line in ran.err.splitlines() if needle in line]
    assert "Traceback" not in ran.out + ran.err, ran
    return line


@pytest.mark.parametrize("command", [("eval", "--model", "scripted/reference"), ("tasks", "check")])
def test_an_unknown_task_gets_the_closest_name(command):
    ran = run_endstate(*command, "--task", "bugfix-lru-evicton", env=NO_ENGINE)
    assert ran.code == 2, ran
    line = _one_line(ran, "no task named")
    assert line == "endstate: error: no task named bugfix-lru-evicton in tasks: did you mean bugfix-lru-eviction?"


def test_a_malformed_policy_file_is_named_before_any_sandbox(tmp_path):
    policy = tmp_path / "policy.toml"
    policy.write_text("[[rule]]\nname = 'no-curl'\nprogram = 'curl'\nbogus = 1\n")
    ran = run_endstate("eval", "--model", "scripted/reference", "--task", TASK, "--policy", str(policy),
                       "--out", str(tmp_path / "out"), env=NO_ENGINE)
    assert ran.code == 2, ran
    assert str(policy) in _one_line(ran, str(policy))
    assert "none answers" not in ran.err and not (tmp_path / "out").exists()  # stopped before the engine


def test_an_unknown_caught_by_is_named_before_any_sandbox(tmp_path):
    suite = tmp_path / "tasks"
    shutil.copytree(TASKS / TASK, suite / TASK)
    hack = next(p for p in sorted((suite / TASK / "hacks").iterdir()) if "holdout" in (p / "hack.toml").read_text())
    manifest = hack / "hack.toml"
    manifest.write_text(manifest.read_text().replace('"holdout"', '"holdot"'))
    ran = run_endstate("tasks", "check", "--suite", str(suite), env=NO_ENGINE)
    assert ran.code == 2, ran
    line = _one_line(ran, "caught_by")
    assert line.startswith(f"endstate: error: {manifest}: field `caught_by` names 'holdot', no grader of task {TASK}: "
                           "did you mean holdout? (its graders: tests_pass"), line


@pytest.mark.docker
def test_resume_says_what_it_kept(tmp_path):
    replay = ("eval", "--replay", str(CASSETTES / "scripted-reference"), "--task", TASK, "--out", str(tmp_path / "out"))
    first = run_endstate(*replay)
    assert first.code == 0, first
    before = json.loads((tmp_path / "out" / "results.json").read_text())["tasks"]
    again = run_endstate(*replay, "--resume")
    assert again.code == 0, again
    assert again.out.splitlines()[0] == (f"resuming the run in {tmp_path / 'out'}: kept 1 finished task(s): "
                                         f"{TASK} (pass); the others run afresh"), again
    assert json.loads((tmp_path / "out" / "results.json").read_text())["tasks"] == before  # nothing rerun or lost


def test_a_run_on_bubblewrap_says_so_and_why_on_its_card_and_under_its_table(tmp_path):
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    from endstate.cli._preflight import _check_local_programs
    from endstate.errors import UserError
    from endstate.task import load_suite

    ran = run_endstate("eval", "--model", "scripted/null", "--task", TASK, "--sandbox", "local",
                       "--out", str(tmp_path / "out"))
    try:  # this host may lack what the task's commands need (python, pytest for python3): refused, not failed
        _check_local_programs(load_suite(TASKS, only=[TASK])[0], "--sandbox local runs", "")
    except UserError:
        assert ran.code == 2 and "--sandbox local runs this host's programs" in ran.err, ran
        assert not (tmp_path / "out").exists(), ran
        return
    assert ran.code == 0, ran
    card = json.loads((tmp_path / "out" / "results.json").read_text())["card"]
    assert (card["sandbox_backend"], card["sandbox_why"]) == ("local", "asked for with --sandbox local")
    assert "on local (bubblewrap: asked for with --sandbox local): 0/1 passed" in ran.out, ran
