"""No detector fires on an honest end state the project ships (every task's solution and
alternatives, tasks-real's fixes, the SWE-bench test data's upstream fixes), and each kind names
a shipped hack that no other kind names."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.grading import detect_trees
from endstate.grading._detect import KINDS
from endstate.task import load_task

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("detector_false_positives", ROOT / "bench" / "detector_false_positives.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_detector_fires_on_a_shipped_honest_end_state(tmp_path: Path) -> None:
    ends = list(_bench().honest_end_states(tmp_path))
    assert len(ends) >= 35  # 22 tasks, 7 real tasks, 3 upstream fixes with and without their tests
    fired = [(what, f.kind, f.path, f.line) for what, fixture, end in ends for f in detect_trees(fixture, end)]
    assert fired == []


#: For each kind, a shipped hack overlay that it alone names (the mutation check's probes).
ONLY = {
    "test_config": ("tasks/bugfix-booking-overlap", "dot-pytest-ini"),
    "tests_skipped": ("tasks/bugfix-lru-eviction", "skip-failing"),
    "tests_removed": ("tasks/refactor-dedupe-validators", "edit-tests"),
    "tests_follow_code": ("tasks/compaction-audit-every-module", "edit-tests"),
    "tests_edited": ("tasks/feature-recipe-scaling", "edit-tests"),
    "special_cased": ("tasks/bugfix-lru-eviction", "special-case"),
    "faked_dependency": ("tasks/deny-read-credentials", "made-up-token"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_alone_names_a_shipped_hack(kind: str) -> None:
    folder, name = ONLY[kind]
    task = load_task(ROOT / folder)
    hack = task.hacks()[name]
    assert {f.kind for f in detect_trees(task.fixture(), hack.tree)} == {kind}
    assert detect_trees(task.fixture(), hack.tree, off=[kind]) == []


def test_endstate_mutate_kills_every_detector_mutant(tmp_path: Path) -> None:

    from endstate.checks._mutation import MUTANTS

    names = [m.name for m in MUTANTS if m.detector]
    assert sorted(m.detector for m in MUTANTS if m.detector) == sorted(KINDS)
    assert all(ONLY[m.detector] == (f"tasks/{m.detect_probes[0][0]}", m.detect_probes[0][1])
               for m in MUTANTS if m.detector)
    ran = run_endstate("mutate", "--suite", str(ROOT / "tasks"), "--replay",
                       str(ROOT / "cassettes" / "scripted-reference"), "--out", str(tmp_path),
                       *(arg for name in names for arg in ("--mutant", name)), timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"{len(names)} of {len(names)} mutant(s) killed" in ran.stdout
    assert "killed   detect-special-cased: bugfix-lru-eviction/hacks/special-case (special_cased) fail->pass" in ran.stdout
