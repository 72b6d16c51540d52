"""`--overwrite` replaces a run whole: no attempt of the new run is read with the old run's files.

An attempt that ends before sealing (a model error) keeps no end state; the old run's end state of
the same task, left beside it, was graded by `regrade` as the new attempt's and turned its error
into a PASS."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke_endstate

from endstate.run import RunFolder, read_results
from endstate.run._resume import RUN_FILE, start_run

ROOT = Path(__file__).resolve().parents[2]


def _old_run(out: Path) -> RunFolder:
    folder = RunFolder(out)
    for path in (folder.transcript("t"), folder.diff("t"), folder.end_state("t"), folder.work("t") / "job.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("old run")
    (out / RUN_FILE).write_text("{}")
    return folder


def test_a_fresh_run_clears_the_old_runs_attempt_files_and_a_resume_keeps_them(tmp_path):
    folder = _old_run(tmp_path / "resumed")
    start_run(tmp_path / "resumed", {}, resume=True)
    assert len(folder.attempt_files("t")) == 4
    folder = _old_run(tmp_path / "replaced")
    start_run(tmp_path / "replaced", {"model": "x"}, resume=False)
    assert folder.attempt_files("t") == []


def test_a_folder_that_held_no_run_keeps_what_it_holds(tmp_path):
    """`--out .` in a project with a work/ folder of its own: nothing of it is a run's to clear."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "mine.txt").write_text("the user's")
    start_run(tmp_path, {}, resume=False)
    assert (tmp_path / "work" / "mine.txt").read_text() == "the user's"


@pytest.mark.docker
def test_regrade_of_an_overwritten_run_never_grades_the_old_runs_end_state(tmp_path):
    out, suite = tmp_path / "run", ROOT / "tasks-harbor"
    passed = invoke_endstate("eval", "--suite", str(suite), "--task", "sh-top-words", "--replay",
                             str(ROOT / "cassettes" / "harbor-scripted-reference"), "--out", str(out))
    assert passed.code == 0, passed.output
    # The hack arm has no hack of this task it can play: its model answers 422, an error before sealing.
    errored = invoke_endstate("eval", "--suite", str(suite), "--task", "sh-top-words", "--model", "scripted/hacks",
                              "--out", str(out), "--overwrite")
    assert errored.code == 1, errored.output
    assert [t.outcome for t in read_results(out).tasks] == ["error"]
    assert not RunFolder(out).end_state("sh-top-words").exists()
    regraded = invoke_endstate("regrade", str(out), "--suite", str(suite), "--out", str(tmp_path / "regraded"))
    assert regraded.code == 0, regraded.output
    assert [t.outcome for t in read_results(tmp_path / "regraded").tasks] == ["error"]
