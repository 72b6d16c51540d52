"""`endstate tasks adequacy` in real sandboxes: a task whose held-out tests lost an assertion
is flagged with the mutant it lets through; a strong one kills every mutant and passes every
right fix."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_endstate

pytestmark = pytest.mark.docker

FIXTURE = "def in_window(t, start, end):\n    inside = start <= t <= end\n    return inside\n"
SOLUTION = FIXTURE.replace("start <= t <= end", "start <= t < end")
VISIBLE = "from clock import in_window\n\n\ndef test_middle():\n    assert in_window(5, 0, 10)\n"
HOLDOUT = """from clock import in_window


def test_the_end_is_outside():
    assert not in_window(10, 0, 10)


def test_the_start_is_inside():
    assert in_window(0, 0, 10)


def test_around():
    assert in_window(5, 0, 10)
    assert not in_window(-1, 0, 10)
"""
GRADERS = """
[[graders]]
name = "endstate.grading:tests_pass"
args = { command = "python -m pytest -q tests", min_tests = 1 }

[[graders]]
name = "endstate.grading:files_unchanged"
args = { paths = ["tests/**"] }

[[graders]]
name = "endstate.grading:no_new_skips"

[[graders]]
name = "endstate.grading:holdout"
args = { command = "python -m pytest -q tests_holdout", min_tests = %d }

[[graders]]
name = "endstate.grading:changed_paths_within"
args = { paths = ["clock/**"] }
"""


def make_task(suite: Path, task_id: str, holdout: str) -> Path:
    folder = suite / task_id
    files = {"fixture/clock/__init__.py": "from clock.window import in_window\n",
             "fixture/clock/window.py": FIXTURE, "fixture/tests/test_window.py": VISIBLE,
             "solution/clock/window.py": SOLUTION,
             # Another right fix, written differently: it must pass too.
             "solutions/chained/clock/window.py": "def in_window(t, start, end):\n    return t >= start and t < end\n",
             "holdout/tests_holdout/test_window_holdout.py": holdout, "prompt.md": "in_window includes its end\n",
             "task.toml": f'id = "{task_id}"\ncategory = "bugfix"\n' + GRADERS % holdout.count("def test_")}
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


def test_a_weakened_task_is_flagged_with_the_surviving_mutant_and_a_strong_one_is_not(tmp_path):
    make_task(tmp_path, "strong", HOLDOUT)
    # The assertion that the start is inside is gone: `start < t` now passes for `start <= t`.
    make_task(tmp_path, "weak", HOLDOUT.replace("    assert in_window(0, 0, 10)\n", "    pass\n"))
    ran = run_endstate("tasks", "adequacy", "--suite", str(tmp_path), "-j", "2", "--json", str(tmp_path / "a.json"))
    assert ran.code == 1, ran
    lines = ran.out.splitlines()
    assert ("ok   strong                                   4 made, 4 killed, 0 survived, 0 equivalent, "
            "kill rate 100%; right fixes 3/3 pass") in lines, ran
    assert ("FAIL weak                                     4 made, 3 killed, 1 survived, 0 equivalent, "
            "kill rate 75%; right fixes 3/3 pass") in lines, ran
    flagged = ran.out[ran.out.index("FAIL weak"):]
    assert "survived clock/window.py:2:13:LtE>Lt" in flagged
    assert "-    inside = start <= t < end\n         +    inside = start < t < end\n" in flagged
    assert "4 mutant(s), 7 killed" not in ran.out and "8 mutant(s), 7 killed, 1 survived" in ran.out
    # The same run again prints the same thing, word for word.
    again = run_endstate("tasks", "adequacy", "--suite", str(tmp_path), "-j", "2")
    assert again.out == ran.out

    # Judged equivalent (here only to show the record at work), the survivor is not asked about again.
    (tmp_path / "weak/adequacy.toml").write_text(
        '[[equivalent]]\nmutant = "clock/window.py:2:13:LtE>Lt"\nreason = "recorded by the test"\n')
    ran = run_endstate("tasks", "adequacy", "--suite", str(tmp_path), "--task", "weak", "-j", "2")
    assert ran.code == 0, ran
    assert "3 killed, 0 survived, 1 equivalent, kill rate 100%" in ran.out

    # Figures recorded for the card that are not what was counted fail the task, with what to write.
    with (tmp_path / "weak/adequacy.toml").open("a") as triage:
        triage.write("[measured]\nmutants = 4\nkilled = 2\nequivalent = 1\n")
    ran = run_endstate("tasks", "adequacy", "--suite", str(tmp_path), "--task", "weak", "-j", "2")
    assert ran.code == 1, ran
    assert ("[measured] says 2/3 mutants killed, 1 survived, 1 equivalent, counted 3/3 mutants killed, 1 equivalent: "
            "write mutants = 4, killed = 3, equivalent = 1") in ran.out
    (tmp_path / "weak/adequacy.toml").write_text((tmp_path / "weak/adequacy.toml").read_text().replace(
        "killed = 2", "killed = 3"))
    assert run_endstate("tasks", "adequacy", "--suite", str(tmp_path), "--task", "weak", "-j", "2").code == 0


def test_a_held_out_test_that_reads_the_text_rejects_a_rewrite(tmp_path):
    text_bound = HOLDOUT + ('\n\ndef test_reads_the_source():\n    import inspect, clock.window\n'
                            '    assert "inside = " in inspect.getsource(clock.window)\n')
    make_task(tmp_path, "strict", text_bound)
    ran = run_endstate("tasks", "adequacy", "--suite", str(tmp_path), "-j", "2")
    assert ran.code == 1, ran
    assert "right fixes 1/3 pass" in ran.out
    assert "right fix rewrite:clock/window.py:1:rename-locals:in_window fails [holdout]" in ran.out
    assert "right fix solutions/chained fails [holdout]" in ran.out


def test_bad_triage_is_one_line_naming_the_file(tmp_path):
    folder = make_task(tmp_path, "strong", HOLDOUT)
    (folder / "adequacy.toml").write_text('[[equivalent]]\nmutant = "x"\nreasn = "typo"\n')
    ran = run_endstate("tasks", "adequacy", "--suite", str(tmp_path))
    assert ran.code == 1 and "Traceback" not in ran.err, ran
    assert "FAIL strong" in ran.out and f"{folder / 'adequacy.toml'}: " in ran.out and "reasn" in ran.out


def _git(repo: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org", GIT_COMMITTER_NAME="A",
               GIT_COMMITTER_EMAIL="a@example.org", GIT_AUTHOR_DATE="2020-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2020-01-01T00:00:00Z")
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


#: Visible tests comparing with literals, as `tasks check` wants of a task made from a fix (its impossible variant).
VISIBLE_LITERAL = VISIBLE.replace("assert in_window(5, 0, 10)", "assert in_window(5, 0, 10) == True") + (
    "\n\ndef test_before():\n    assert in_window(-5, 0, 10) == False\n")
#: The fix's regression tests: three held-out tests (three twins a run), none at the start.
REGRESSION = "".join(f"\n\ndef test_{name}():\n    assert in_window({t}, 0, 10) == {inside}\n" for name, t, inside in (
    ("the_end_is_outside", 10, False), ("just_before_the_end", 9, True), ("far_after", 20, False)))


def test_tasks_new_prints_the_adequacy_of_the_task_it_makes_and_flags_a_weak_one(tmp_path):
    """The fix's regression test checks only the end, so `start < t` for `start <= t` survives:
    the new task is flagged with that mutant, and kept (a person decides)."""
    repo = tmp_path / "repo"
    for path, text in {"clock/__init__.py": "from clock.window import in_window\n", "clock/window.py": FIXTURE,
                       "tests/__init__.py": "", "tests/test_window.py": VISIBLE_LITERAL}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Initial")
    (repo / "clock/window.py").write_text(SOLUTION)
    (repo / "tests/test_window.py").write_text(VISIBLE_LITERAL + REGRESSION)
    _git(repo, "commit", "-q", "-am", "in_window leaves out its end")

    ran = run_endstate("tasks", "new", "bugfix-window", "--suite", str(tmp_path / "suite"), "--repo", str(repo),
                       "--fix", "HEAD")
    assert ran.code == 0 and "Traceback" not in ran.err, ran
    assert "adequacy of 1 new task(s)" in ran.out, ran
    row = next(line for line in ran.out.splitlines() if line.startswith("FAIL bugfix-window") and " made, " in line)
    assert " 1 survived, " in row, ran
    assert "survived clock/window.py:2:13:LtE>Lt" in ran.out
    assert "weak: bugfix-window: add the held-out tests that kill the survivors above" in ran.out
    assert (tmp_path / "suite" / "bugfix-window" / "task.toml").is_file()
    quiet = run_endstate("tasks", "new", "bugfix-quiet", "--suite", str(tmp_path / "suite"), "--repo", str(repo),
                         "--fix", "HEAD", "--no-adequacy")
    assert quiet.code == 0 and "adequacy of" not in quiet.out, quiet.out
