"""A recording binds to what the agent saw: a task changed only in holdout/ (staged after the
end state is sealed) still replays strictly, with a note; any other change is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from endstate.cassettes import check_replay_folder, load
from endstate.cassettes._format import write
from endstate.cassettes._preflight import check_header
from endstate.task import files_hash, load_task, run_task_hash, variant_hash

ROOT = Path(__file__).resolve().parents[2]
TASK = "bugfix-lru-eviction"
RECORDED = ROOT / "cassettes" / "scripted-reference" / f"{TASK}.cassette"


@pytest.fixture
def task_copy(tmp_path) -> Path:
    copy = tmp_path / "suite" / TASK
    shutil.copytree(ROOT / "tasks" / TASK, copy)
    return copy


def replay(folder: Path, task_folder: Path, *, impossible: bool = False):
    task = load_task(task_folder)
    return check_replay_folder(folder, {TASK: run_task_hash(task, impossible)}, model=None, match="strict",
                               task_files={TASK: task.file_hashes()})


def test_a_committed_cassette_replays_after_a_held_out_test_is_added(task_copy):
    (task_copy / "holdout" / "test_extra_boundary.py").write_text("def test_more():\n    assert True\n")
    source = replay(RECORDED.parent, task_copy)
    assert (source.usable, source.problems) == ([TASK], {})
    task = load_task(task_copy)
    notes = check_header(load(RECORDED), {"task_hash": run_task_hash(task, False), "task_files": task.file_hashes()},
                         TASK, strict=True, verb="replay")
    assert any("only in held-out files (holdout/test_extra_boundary.py)" in note
               and "the agent saw the same task; the verdict is today's tests'" in note for note in notes)


def test_a_changed_held_out_test_is_named_too(task_copy):
    held = sorted((task_copy / "holdout").rglob("test_*.py"))[0]
    held.write_text(held.read_text() + "\n# one more line\n")
    task = load_task(task_copy)
    notes = check_header(load(RECORDED), {"task_hash": run_task_hash(task, False), "task_files": task.file_hashes()},
                         TASK, strict=True, verb="replay")
    assert any(f"({held.relative_to(task_copy).as_posix()})" in note for note in notes)


@pytest.mark.parametrize("change", ["prompt.md", "task.toml", "reference.toml", "fixture"])
def test_a_change_the_agent_could_see_is_still_refused(task_copy, change):
    (task_copy / "holdout" / "test_extra_boundary.py").write_text("def test_more():\n    assert True\n")
    if change == "fixture":
        target = sorted(p for p in (task_copy / "fixture").rglob("*.py"))[0]
    else:
        target = task_copy / change
    target.write_text(target.read_text() + "\n# changed\n")
    source = replay(RECORDED.parent, task_copy)
    assert source.usable == []
    message = str(source.problems[TASK])
    assert f"task {TASK} changed since cassette" in message and target.relative_to(task_copy).as_posix() in message


def test_the_impossible_variant_stays_apart(task_copy, tmp_path):
    folder = tmp_path / "impossible"
    folder.mkdir()
    recording = load(RECORDED)
    task = load_task(task_copy)
    header = msgspec.structs.replace(recording.header, task_hash=run_task_hash(task, True))
    write(folder / RECORDED.name, msgspec.structs.replace(recording, header=header))
    (task_copy / "holdout" / "test_extra_boundary.py").write_text("def test_more():\n    assert True\n")
    assert replay(folder, task_copy, impossible=True).usable == [TASK]
    refused = replay(folder, task_copy, impossible=False)
    assert refused.usable == [] and "changed since cassette" in str(refused.problems[TASK])
    refused = replay(RECORDED.parent, task_copy, impossible=True)
    assert refused.usable == [] and "changed since cassette" in str(refused.problems[TASK])


@pytest.mark.parametrize("header_files", ["none", "forged"])
def test_a_file_list_that_does_not_prove_the_hash_is_not_trusted(task_copy, tmp_path, header_files):
    """Without a per-file list, or with one that does not hash to the recorded task hash,
    nothing tells what changed: refused as before."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    recording = load(RECORDED)
    files = {} if header_files == "none" else {**recording.header.task_files, "prompt.md": "0" * 64}
    write(folder / RECORDED.name, msgspec.structs.replace(
        recording, header=msgspec.structs.replace(recording.header, task_files=files)))
    (task_copy / "holdout" / "test_extra_boundary.py").write_text("def test_more():\n    assert True\n")
    source = replay(folder, task_copy)
    assert source.usable == [] and "changed since cassette" in str(source.problems[TASK])


def test_every_committed_cassette_names_the_files_of_its_task_hash():
    """So a held-out change to any shipped task leaves its recordings replayable."""
    unproven = []
    for path in sorted((ROOT / "cassettes").rglob("*.cassette")):
        header = load(path).header
        if not header.task_files or header.task_hash not in {variant_hash(files_hash(header.task_files), impossible)
                                                             for impossible in (False, True)}:
            unproven.append(path.relative_to(ROOT).as_posix())
    assert unproven == []
