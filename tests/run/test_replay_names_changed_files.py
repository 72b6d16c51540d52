"""A replay refused because the task changed since its recording names the files that changed."""

from __future__ import annotations

import shutil
from pathlib import Path

from endstate.cassettes import FORMAT_VERSION
from endstate.cassettes._format import CassetteWriter, Header, Interaction, RecordedRequest, RecordedResponse
from endstate.cassettes._preflight import changed_files
from endstate.run import RunConfig, prepare_replay
from endstate.task import load_task

TASK = Path(__file__).resolve().parents[2] / "tasks" / "bugfix-booking-overlap"


def _record(folder: Path, task, *, files: bool = True) -> None:
    header = Header(format_version=FORMAT_VERSION, endstate_version="0.1.0", model="scripted/reference",
                    task_id=task.id, task_hash=task.content_hash(), image_id="", created="2025-01-01T00:00:00Z",
                    task_files=task.file_hashes() if files else {})
    writer = CassetteWriter.create(folder / f"{task.id}.cassette", header, overwrite=True)
    writer.append(Interaction(RecordedRequest("POST", "/v1/chat/completions", b"{}", {}, "agent", 1, "0" * 64),
                              RecordedResponse(200, {}, b"{}")))
    writer.end(1)
    writer.close()


def test_a_changed_task_names_the_changed_added_and_removed_files(tmp_path):
    root = shutil.copytree(TASK, tmp_path / "task" / TASK.name)
    task = load_task(root)
    assert "prompt.md" in task.file_hashes() and not any(p.startswith("hacks/") for p in task.file_hashes())
    (tmp_path / "c").mkdir()
    _record(tmp_path / "c", task)
    (root / "prompt.md").write_text("another bug report\n")
    (root / "fixture" / "NOTES.txt").write_text("new\n")
    task = load_task(root)
    config = RunConfig(model="scripted/reference", mode="replay", cassettes=str(tmp_path / "c"))
    _, _, (problem,) = prepare_replay([task], config)
    assert f"task {task.id} changed since cassette" in str(problem)
    assert "was recorded (changed: prompt.md; added: fixture/NOTES.txt; task hash" in str(problem)
    _record(tmp_path / "c", load_task(TASK), files=False)  # an older recording: no file list, the message as before
    _, _, (problem,) = prepare_replay([task], config)
    assert "was recorded (task hash" in str(problem)


def test_changed_files_in_words():
    assert changed_files({}, {"a": "1"}) == ""
    assert changed_files({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}) == "changed: b; added: c"
    many = {f"f{i}": "x" for i in range(7)}
    assert changed_files(many, {}) == "removed: f0, f1, f2, f3, f4 and 2 more"
