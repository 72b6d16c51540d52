"""Forking the reference arm's recordings, and record modes, through the real CLI in real
sandboxes (two or three tasks, not the suite: the shared prefix is what is under test)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cli_runner import Ran, run_endstate

from endstate.cassettes import load

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "cassettes" / "scripted-reference"
TASKS = ("bugfix-invoice-rounding", "feature-todo-json-output")


def _only(*tasks: str) -> list[str]:
    return [part for task in tasks for part in ("--task", task)]


def _results(folder: Path) -> dict[str, dict]:
    return {t["task_id"]: t for t in json.loads((folder / "results.json").read_text())["tasks"]}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _forked(out: Path, at: str, model: str) -> Ran:
    """The reference arm's cassettes forked at turn `at` onto `model`, run to its end."""
    ran = run_endstate("eval", "--replay", str(REFERENCE), "--fork-at", at, "--model", model, *_only(*TASKS),
                       "--out", str(out))
    assert ran.returncode == 0, ran
    return ran


@pytest.mark.docker
def test_forking_the_reference_at_turn_1_onto_null_fails_with_turn_0_replayed(tmp_path: Path) -> None:
    out = tmp_path / "fork"
    ran = _forked(out, "1", "scripted/null")
    results = _results(out)
    for task in TASKS:
        assert results[task]["outcome"] == "fail", results[task]
        assert results[task]["provenance"] == {"mode": "forked", "replayed_turns": 1, "live_from": 1,
                                               "parent": _sha(REFERENCE / f"{task}.cassette")}
        assert f"endstate: {task}: forked: turns 0..0 replayed, live from turn 1" in ran.stderr
        # Turn 0 is the reference arm's answer (a tool call the null arm never makes); then null stops.
        answers = [m for m in json.loads((out / "transcripts" / f"{task}.json").read_text())
                   if m["role"] == "assistant"]
        assert answers[0]["tool_calls"] and not answers[-1].get("tool_calls") and len(answers) == 2
        header = load(out / "cassettes" / f"{task}.cassette").header
        assert (header.model, header.parent, header.fork_at) == ("scripted/null", _sha(REFERENCE / f"{task}.cassette"), 1)
    assert f"scripted/null (record, fork of {REFERENCE} at turn 1) on docker: 0/2 passed" in ran.stdout
    report = run_endstate("report", str(out), "--out", str(tmp_path / "report"))
    card = json.loads((tmp_path / "report" / "report.json").read_text())["rows"][0]["card"]
    assert card["forked_tasks"] == [{"task": task, "live_from": 1} for task in TASKS], report.stdout + report.stderr
    assert card["fork_from"] == str(REFERENCE)


@pytest.mark.docker
def test_forking_at_the_last_turn_onto_the_reference_passes_and_replays_strictly(tmp_path: Path) -> None:
    out = tmp_path / "fork"
    _forked(out, "last", "scripted/reference")
    forked = _results(out)
    assert {t: r["outcome"] for t, r in forked.items()} == {t: "pass" for t in TASKS}
    turns = {t: len(load(REFERENCE / f"{t}.cassette").interactions) for t in TASKS}
    assert {t: r["provenance"]["live_from"] for t, r in forked.items()} == {t: n - 1 for t, n in turns.items()}

    again = run_endstate("eval", "--replay", str(out / "cassettes"), *_only(*TASKS), "--repeat", "3",
                         "--out", str(tmp_path / "replay"))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "pass/fail vectors identical: yes" in again.stdout and "sealed tree hashes identical: yes" in again.stdout
    replayed = _results(tmp_path / "replay" / "run-1")
    assert {t: r["tree_hash"] for t, r in replayed.items()} == {t: r["tree_hash"] for t, r in forked.items()}
    assert {t: r["provenance"]["mode"] for t, r in replayed.items()} == {t: "replayed" for t in TASKS}


@pytest.mark.docker
def test_record_modes_once_and_new_episodes_say_what_they_did(tmp_path: Path) -> None:
    changed, kept, missing = "bugfix-invoice-rounding", "feature-todo-json-output", "refactor-tuple-to-dataclass"
    suite, cassettes = tmp_path / "tasks", tmp_path / "cassettes"
    for task in (changed, kept, missing):
        shutil.copytree(ROOT / "tasks" / task, suite / task)
    cassettes.mkdir()
    for task in (changed, kept):
        shutil.copyfile(REFERENCE / f"{task}.cassette", cassettes / f"{task}.cassette")
    record = ("record", "--suite", str(suite), "--model", "scripted/reference", "--cassettes", str(cassettes))

    ran = run_endstate(*record, "--record-mode", "once", *_only(kept, missing), "--out", str(tmp_path / "once"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"endstate: {kept}: replayed: every turn from its cassette" in ran.stderr
    assert f"endstate: {missing}: recorded live" in ran.stderr
    assert _sha(cassettes / f"{kept}.cassette") == _sha(REFERENCE / f"{kept}.cassette")
    assert load(cassettes / f"{missing}.cassette").complete

    prompt = suite / changed / "prompt.md"
    prompt.write_text(prompt.read_text() + "\nKeep the change small.\n")
    ran = run_endstate(*record, "--record-mode", "new_episodes", *_only(changed, kept), "--out", str(tmp_path / "new"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = _results(tmp_path / "new")
    assert results[changed]["provenance"] == {"mode": "forked", "live_from": 0,
                                              "parent": _sha(REFERENCE / f"{changed}.cassette")}
    assert results[kept]["provenance"] == {"mode": "replayed", "replayed_turns": 6}
    assert f"endstate: {changed}: forked: nothing replayed, live from turn 0" in ran.stderr
    assert _sha(cassettes / f"{kept}.cassette") == _sha(REFERENCE / f"{kept}.cassette")  # matched: left as it was
    rewritten = load(cassettes / f"{changed}.cassette")
    assert (rewritten.header.fork_at, rewritten.complete) == (0, True)
    assert "Keep the change small." in rewritten.interactions[0].request.body.decode()
    assert _sha(tmp_path / "new" / "parents" / f"{changed}.cassette") == _sha(REFERENCE / f"{changed}.cassette")


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "--fork-at", "1", "--model", "scripted/null"], "--fork-at needs --replay"),
    (["eval", "--replay", str(REFERENCE), "--fork-at", "1"], "--fork-at needs --model"),
    (["eval", "--replay", str(REFERENCE), "--fork-at", "x", "--model", "scripted/null"], "'x' is not a turn"),
    (["eval", "--replay", str(REFERENCE), "--fork-at", "1", "--model", "scripted/null", "--executor", "ray"],
     "run on the local executor only"),
    (["record", "--model", "scripted/reference", "--record-mode", "once", "--fork-at", "1", "--replay",
      str(REFERENCE)], "--record-mode and --fork-at are two ways to record"),
    (["record", "--model", "scripted/reference", "--replay", str(REFERENCE)], "pass --fork-at K as well"),
])
def test_a_fork_asked_wrongly_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    ran = run_endstate(*args)
    assert ran.returncode == 2 and message in ran.stderr and "Traceback" not in ran.stderr, ran.stderr


def test_a_task_with_no_parent_cassette_is_skipped_by_name(tmp_path: Path) -> None:
    ran = run_endstate("eval", "--replay", str(tmp_path), "--fork-at", "1", "--model", "scripted/null",
                       "--task", TASKS[0], "--out", str(tmp_path / "out"))
    assert ran.returncode == 2
    assert f"cannot fork task {TASKS[0]}: no cassette for task {TASKS[0]}" in ran.stderr
    assert "Traceback" not in ran.stderr
