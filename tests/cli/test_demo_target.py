"""`make demo` is the reference arm over the whole suite: a task it does not pass must fail the
target, not leave it green with "21/22 passed" in its table. Its command, as the Makefile spells
it, run on a task the replayed model does not pass."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from cli_runner import run_endstate

ROOT = Path(__file__).resolve().parents[2]


def _demo_args() -> list[str]:
    """The demo target's `endstate eval` arguments, with the Makefile's variables filled in."""
    makefile = (ROOT / "Makefile").read_text()
    (line,) = re.findall(r"^demo:.*\n\t\$\(ES\) (eval .*)$", makefile, flags=re.M)
    return shlex.split(line.replace("$(JOBS)", "1"))


@pytest.mark.docker
def test_the_demo_command_fails_when_a_task_does_not_pass(tmp_path):
    # The last of a repeated option wins: the same command, replaying the no-edit arm on one task.
    ran = run_endstate(*_demo_args(), "--model", "scripted/null", "--replay", str(ROOT / "cassettes" / "scripted-null"),
                       "--task", "bugfix-lru-eviction", "--out", str(tmp_path / "run"))
    assert "0/1 passed (1 fail)" in ran.out, ran.output
    assert ran.code == 1, ran.output
