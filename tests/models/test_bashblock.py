"""The control arms in a text-action agent's format: each tool call as a shell command with
the same effect, one a turn, then the submit command."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from endstate.models.scripted._bashblock import as_command, bash_block_answer
from endstate.models.scripted._policies import null, reference
from endstate.task import load_task

TASKS = Path(__file__).resolve().parents[2] / "tasks"
FORMAT = json.dumps({"fence": "mswea_bash_command", "submit": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"})


def _sh(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", command], cwd=cwd, capture_output=True, text=True)


@pytest.mark.parametrize("content", ["plain\n", "no newline at end", "quotes ' \" and $HOME `x`\n\\n", "ünïcode\r\n"])
def test_write_file_writes_the_exact_bytes_and_makes_folders(tmp_path, content):
    done = _sh(as_command("write_file", {"path": "a b/c.py", "content": content}), tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a b" / "c.py").read_bytes() == content.encode()


def test_edit_file_replaces_the_one_occurrence_or_fails(tmp_path):
    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\r\ny = 'x = 1'\n")
    assert _sh(as_command("edit_file", {"path": "m.py", "old": "y = 'x = 1'", "new": "y = 2"}), tmp_path).returncode == 0
    assert target.read_bytes() == b"x = 1\r\ny = 2\n"
    twice = _sh(as_command("edit_file", {"path": "m.py", "old": "=", "new": ":"}), tmp_path)
    assert twice.returncode == 1 and "occurs 2 times" in twice.stderr
    assert target.read_bytes() == b"x = 1\r\ny = 2\n"


def test_read_file_and_bash(tmp_path):
    (tmp_path / "-odd name").write_text("hello\n")
    assert _sh(as_command("read_file", {"path": "-odd name"}), tmp_path).stdout == "hello\n"
    assert as_command("bash", {"command": "python -m pytest -q tests"}) == "python -m pytest -q tests"


def _command(message: dict) -> str:
    blocks = re.findall(r"```mswea_bash_command\s*\n(.*?)\n```", message["content"], re.DOTALL)
    assert len(blocks) == 1, message
    return blocks[0]


def test_the_reference_is_flattened_one_call_a_turn_then_submitted():
    task = load_task(TASKS / "bugfix-lru-eviction")
    commands = [_command(bash_block_answer(reference, task, turn, FORMAT)) for turn in range(6)]
    assert commands[0] == "python -m pytest -q tests" and commands[1] == "cat -- cachekit/lru.py"
    assert commands[2].startswith("python3 -c") and commands[3] == "python -m pytest -q tests"
    assert commands[4] == commands[5] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    assert bash_block_answer(reference, task, 2, FORMAT) == bash_block_answer(reference, task, 2, FORMAT)


def test_the_null_arm_submits_at_once():
    task = load_task(TASKS / "bugfix-lru-eviction")
    assert _command(bash_block_answer(null, task, 0, FORMAT)) == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
