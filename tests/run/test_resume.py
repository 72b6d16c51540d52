"""Starting and resuming a run in an output folder, without running anything."""

from __future__ import annotations

import pytest

from endstate.errors import UserError
from endstate.run import RunCard, RunResult, TaskResult, write_results
from endstate.run._resume import RUN_FILE, discard_partial, run_key, start_run

CARD = RunCard(endstate_version="0", model="scripted/reference", provider="scripted", temperature=0.0, seed=0,
               retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker", image="i",
               image_id="sha256:1", task_pack_hash="abc", tasks=2, guards_disabled=())
KEY = run_key(CARD, {"settings": {"timeout_s": 120.0}, "base_url": ""})


def test_a_fresh_start_records_the_key_and_a_resume_keeps_finished_tasks(tmp_path):
    assert start_run(tmp_path, KEY, resume=False) == []
    assert (tmp_path / RUN_FILE).is_file() and not list(tmp_path.glob("*.tmp"))
    assert start_run(tmp_path, KEY, resume=True) == []  # killed before any task finished
    write_results(RunResult(CARD, [TaskResult("a", "bugfix", "pass")]), tmp_path)
    assert [t.task_id for t in start_run(tmp_path, KEY, resume=True)] == ["a"]


def test_a_resume_with_other_settings_names_every_difference(tmp_path):
    start_run(tmp_path, KEY, resume=False)
    other = run_key(CARD, {"settings": {"timeout_s": 30.0}, "base_url": ""})
    other["task_pack_hash"] = "def"
    with pytest.raises(UserError) as caught:
        start_run(tmp_path, other, resume=True)
    assert "settings was {'timeout_s': 120.0}, now {'timeout_s': 30.0}" in str(caught.value)
    assert "task_pack_hash was 'abc', now 'def'" in str(caught.value)


def test_nothing_or_a_damaged_file_to_resume_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="holds no run"):
        start_run(tmp_path, KEY, resume=True)
    (tmp_path / RUN_FILE).write_text("{")
    with pytest.raises(UserError, match="is damaged"):
        start_run(tmp_path, KEY, resume=True)


def test_discarding_a_partial_task_leaves_the_others(tmp_path):
    for task in ("a", "b"):
        (tmp_path / "work" / task).mkdir(parents=True)
        (tmp_path / "work" / task / "journal.json").write_text("{}")
        (tmp_path / "transcripts").mkdir(exist_ok=True)
        (tmp_path / "transcripts" / f"{task}.json").write_text("[]")
        (tmp_path / f"{task}.cassette").write_bytes(b"x")
    discard_partial(tmp_path, "a", tmp_path / "a.cassette")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "b.cassette", "transcripts/b.json", "work/b/journal.json"]


def test_a_resume_removes_the_tmp_files_a_kill_during_finalize_left(tmp_path):
    start_run(tmp_path, KEY, resume=False)
    write_results(RunResult(CARD, [TaskResult("a", "bugfix", "pass")]), tmp_path)
    (tmp_path / "results.json.tmp").write_bytes(b'{"card": ')  # killed inside write_atomically
    (tmp_path / "work" / "a").mkdir(parents=True)
    (tmp_path / "work" / "a" / "job.json.tmp").write_bytes(b"")
    assert [t.task_id for t in start_run(tmp_path, KEY, resume=True)] == ["a"]
    assert not list(tmp_path.rglob("*.tmp"))
    cassettes = tmp_path / "cassettes"
    cassettes.mkdir()
    for name in (".b.cassette.123.tmp", ".c.cassette.123.tmp"):  # b's save was killed; c belongs to another task
        (cassettes / name).write_bytes(b"x")
    discard_partial(tmp_path, "b", cassettes / "b.cassette")
    assert [p.name for p in cassettes.iterdir()] == [".c.cassette.123.tmp"]
