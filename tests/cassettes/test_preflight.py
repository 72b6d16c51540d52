"""A replay folder checked up front: every cassette decoded, its header for this task and
model; the model and settings replay takes from the headers."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.cassettes import FORMAT_VERSION, check_replay_folder, load, replay_settings
from endstate.cassettes._format import CassetteWriter, Header, Interaction, RecordedRequest, RecordedResponse
from endstate.errors import CassetteError
from endstate.models import RunSettings

ROOT = Path(__file__).resolve().parents[2]
MODEL = "openai-compatible/tiny"
SETTINGS = RunSettings(temperature=0.8, seed=3, max_retries=2, tool_choice="required")


def write(folder: Path, task_id: str, *, model: str = MODEL, recorded_for: str | None = None,
          settings: RunSettings | None = SETTINGS, task_hash: str = "h", complete: bool = True) -> Path:
    path = folder / f"{task_id}.cassette"
    header = Header(format_version=FORMAT_VERSION, endstate_version="0.1.0", model=model,
                    task_id=recorded_for or task_id, task_hash=task_hash, image_id="", created="2025-01-01T00:00:00Z",
                    settings=settings)
    writer = CassetteWriter.create(path, header, overwrite=True)
    writer.append(Interaction(
        RecordedRequest("POST", "/v1/chat/completions", b'{"messages": []}' * 40, {}, "agent", 1, "0" * 64),
        RecordedResponse(200, {}, b"{}")))
    if complete:  # an interrupted record leaves no end marker
        writer.end(1)
    writer.close()
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    for task_id in ("a", "b", "c"):
        write(tmp_path, task_id)
    return tmp_path


TASKS = {"a": "h", "b": "h", "c": "h"}


def test_a_sound_folder_gives_its_model_and_settings(folder):
    source = check_replay_folder(folder, TASKS, model=None, match="strict")
    assert (source.model, source.settings, source.usable, source.problems) == (MODEL, SETTINGS, ["a", "b", "c"], {})


def test_committed_format_1_cassettes_load_without_settings():
    folder = ROOT / "cassettes" / "scripted-reference"
    assert load(folder / "bugfix-lru-eviction.cassette").header.format_version == 1
    source = check_replay_folder(folder, {"bugfix-lru-eviction": load(folder / "bugfix-lru-eviction.cassette")
                                          .header.task_hash}, model=None, match="strict")
    assert (source.model, source.settings, source.problems) == ("scripted/reference", None, {})
    given = RunSettings(temperature=0.5)
    assert replay_settings(source, given, {"temperature"}) is given


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


DAMAGE = {
    "missing": (lambda p: p.unlink(), "no cassette for task b at {path}: record it"),
    "directory": (lambda p: (p.unlink(), p.mkdir()), "{path} is a directory, not a cassette file"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[:-9]), "cassette {path} is truncated or corrupt"),
    "flipped": (flip_a_byte, "cassette {path} is truncated or corrupt"),
    "other task": (lambda p: write(p.parent, "b", recorded_for="a"), "cassette {path} was recorded for task a, not b"),
    "not a cassette": (lambda p: p.write_text("hello"), "{path} is not an endstate cassette"),
    "incomplete": (lambda p: write(p.parent, "b", complete=False),
                   "cannot replay: cassette {path} is incomplete: no end marker (the recording was cut short): "
                   "`endstate record --resume` (same --out and --cassettes) re-records it"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_bad_cassette_is_a_problem_of_its_task_only(folder, damage):
    spoil, expected = DAMAGE[damage]
    path = folder / "b.cassette"
    spoil(path)
    source = check_replay_folder(folder, TASKS, model=None, match="strict")
    assert source.usable == ["a", "c"] and list(source.problems) == ["b"]
    assert expected.format(path=path) in str(source.problems["b"])
    assert source.model == MODEL


def test_a_missing_cassette_of_a_foreign_agents_replay_says_to_record_it_with_that_agent(folder):
    (folder / "b.cassette").unlink()
    source = check_replay_folder(folder, TASKS, model=MODEL, match="strict", agent="mini-swe-agent@0123456789ab")
    assert f"record it with `endstate record --agent mini-swe-agent --model {MODEL}`" in str(source.problems["b"])


def test_another_models_cassette_is_foreign_when_the_model_is_chosen(folder):
    write(folder, "b", model="openai/other")
    with pytest.raises(CassetteError, match=r"recorded with 2 models: openai-compatible/tiny \(2: a.cassette, "
                                             r"c.cassette\); openai/other \(1: b.cassette\): pass --model"):
        check_replay_folder(folder, TASKS, model=None, match="strict")
    source = check_replay_folder(folder, TASKS, model=MODEL, match="strict")
    assert source.usable == ["a", "c"]
    assert f"cassette {folder / 'b.cassette'} was recorded with model openai/other, this run uses {MODEL}" in str(
        source.problems["b"])


def test_a_model_none_of_the_cassettes_has_is_refused(folder):
    with pytest.raises(CassetteError, match=f"--model openai/x contradicts the cassettes in {folder}, recorded with "
                                            f"{MODEL}"):
        check_replay_folder(folder, TASKS, model="openai/x", match="strict")


def test_a_changed_task_is_refused_in_strict_and_allowed_in_sequence(folder):
    changed = {**TASKS, "c": "new"}
    source = check_replay_folder(folder, changed, model=None, match="strict")
    assert "task c changed since cassette" in str(source.problems["c"])
    assert check_replay_folder(folder, changed, model=None, match="sequence").usable == ["a", "b", "c"]


def test_cassettes_recorded_with_different_settings_are_refused(folder):
    write(folder, "c", settings=RunSettings(temperature=0.8, seed=4, max_retries=2, tool_choice="required"))
    with pytest.raises(CassetteError, match=r"recorded with different settings \(seed 3 and 4\)"):
        check_replay_folder(folder, TASKS, model=None, match="strict")


def test_an_explicit_option_must_agree_with_the_recording(folder):
    source = check_replay_folder(folder, TASKS, model=None, match="strict")
    same = RunSettings(temperature=0.8, seed=0)
    assert replay_settings(source, same, {"temperature"}) == SETTINGS  # agrees; seed 0 was not given
    with pytest.raises(CassetteError, match=r"--seed 0 contradicts the cassettes in .*, recorded with seed 3: "
                                            r"drop --seed"):
        replay_settings(source, same, {"temperature", "seed"})


def test_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(CassetteError, match="replay folder .*nowhere does not exist"):
        check_replay_folder(tmp_path / "nowhere", TASKS, model=None, match="strict")
