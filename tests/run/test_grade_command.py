"""`endstate grade` and `endstate regrade`: an end state graded outside a run, by the runner's grading path.

tests/data/regrade-run is a committed replay (cassettes/scripted-reference on two tasks) with the
end states the run kept; the Docker tests grade those, one grading container per end state.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_runner import invoke_endstate

from endstate.report import compare_folders, render_comparison
from endstate.run import RunFolder, read_results
from endstate.run._attempt import keep_end_state, read_end_state
from endstate.sandbox import FileEntry

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "data" / "regrade-run"
LRU, INVOICE = "bugfix-lru-eviction", "bugfix-invoice-rounding"

#: A held-out test the reference fix does not meet: it decides the LRU task's verdict and no other.
STRICTER = '''from cachekit import LRUCache


def test_a_cache_of_capacity_zero_holds_nothing():
    cache = LRUCache(0)
    cache.put("a", 1)
    assert len(cache) == 0
'''


def test_a_kept_end_state_reads_back_byte_for_byte(tmp_path):
    tree = {"a.py": FileEntry(0o644, b"x = 1\n"), "bin/run": FileEntry(0o755, b"#!/bin/sh\n"),
            "link": FileEntry.symlink("a.py")}
    keep_end_state(tmp_path / "one.tar.gz", tree)
    keep_end_state(tmp_path / "two.tar.gz", tree)
    assert read_end_state(tmp_path / "one.tar.gz") == tree
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()  # deterministic


def test_grade_refuses_a_missing_tree_or_task_in_one_line(tmp_path):
    missing_tree = invoke_endstate("grade", "--task", str(ROOT / "tasks" / LRU), "--tree", str(tmp_path / "no"))
    assert missing_tree.code == 2 and "--tree" in missing_tree.output and "Traceback" not in missing_tree.output
    missing_task = invoke_endstate("grade", "--task", str(tmp_path), "--tree", str(tmp_path))
    assert missing_task.code == 2 and "no task.toml" in missing_task.output


def test_regrade_refuses_a_suite_without_the_runs_tasks(tmp_path):
    result = invoke_endstate("regrade", str(RUN), "--suite", str(tmp_path), "--out", str(tmp_path / "new"))
    assert result.code == 2 and "no task named bugfix-invoice-rounding" in result.output and "Traceback" not in result.output


@pytest.mark.docker
def test_grade_says_pass_for_the_fix_and_fail_for_the_fixture(tmp_path):
    task = ROOT / "tasks" / LRU
    fixed = tmp_path / "fixed"
    shutil.copytree(task / "fixture", fixed)
    shutil.copytree(task / "solution", fixed, dirs_exist_ok=True)
    passed = invoke_endstate("grade", "--task", str(task), "--tree", str(fixed), "--sandbox", "docker")
    assert (passed.code, passed.output) == (0, f"PASS {LRU}\n")
    failed = invoke_endstate("grade", "--task", str(task), "--tree", str(task / "fixture"), "--sandbox", "docker")
    assert failed.code == 1 and failed.output.startswith(f"FAIL {LRU}: tests_pass: ")


@pytest.mark.docker
def test_regrade_with_one_held_out_test_added_changes_only_its_verdict(tmp_path):
    suite = tmp_path / "tasks"
    for task_id in (LRU, INVOICE):
        shutil.copytree(ROOT / "tasks" / task_id, suite / task_id)
    (suite / LRU / "holdout" / "tests_holdout" / "test_capacity_zero.py").write_text(STRICTER)
    out = tmp_path / "regraded"
    made = invoke_endstate("regrade", str(RUN), "--suite", str(suite), "--out", str(out))
    assert made.code == 0, made.output
    old, new = read_results(RUN), read_results(out)
    assert {t.task_id: t.outcome for t in old.tasks} == {LRU: "pass", INVOICE: "pass"}
    assert {t.task_id: t.outcome for t in new.tasks} == {LRU: "fail", INVOICE: "pass"}
    lru = next(t for t in new.tasks if t.task_id == LRU)
    assert lru.failing_grader == "holdout" and "test_a_cache_of_capacity_zero_holds_nothing" in lru.reason
    hashes = {t.task_id: t.task_hash for t in new.tasks}
    assert hashes[LRU] != hashes[INVOICE] and all(len(h) == 64 for h in hashes.values())
    assert new.card.regrade_of == old.card.task_pack_hash != new.card.task_pack_hash
    assert RunFolder(out).end_state(LRU).read_bytes() == RunFolder(RUN).end_state(LRU).read_bytes()
    comparison = compare_folders(RUN, out)  # paired, though the task packs differ: one is the other regraded
    overall = comparison.summaries[0]
    assert (overall.base_better, overall.cand_better) == (1, 0)
    assert "graded by two versions of the tasks" in render_comparison(comparison)


def test_regrade_never_writes_over_a_run(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("{}")
    result = invoke_endstate("regrade", str(RUN), "--out", str(out))
    assert result.code == 2 and "already holds a run" in result.output
    assert (out / "results.json").read_text() == "{}"
