"""A refused `record` or fork leaves no folder behind, whichever check refuses it.

Each command runs in an empty folder of its own, with its outputs at their defaults
(cassettes/..., runs/...) or named; no engine answers (DOCKER_HOST points nowhere), so a
command that got past every check stops on that, and leaves nothing either. An empty
folder left by a refusal reads as a run or a recording that went wrong, and a later
`record` into it as one to resume.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_runner import invoke_endstate

ROOT = Path(__file__).resolve().parents[2]
TASK = "bugfix-lru-eviction"
PARENT = str(ROOT / "cassettes" / "scripted-reference")
SUITE = ("--suite", str(ROOT / "tasks"), "--task", TASK)
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock", "OPENAI_API_KEY": "sk-test-not-a-real-key",
             "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key"}
FORK = ("--fork-at", "1", "--replay", PARENT)

#: (the command, what its one line says). EMPTY, BAD_POLICY and EARLIER_RUN stand for inputs made in the folder.
REFUSED = {
    "unknown provider": (["record", *SUITE, "--model", "bogus/x"], "names unknown provider 'bogus'"),
    "agent of another wire format": (["record", *SUITE, "--agent", "claude-code", "--model", "scripted/reference"],
                                     "use --model scripted-anthropic/reference"),
    "setting that does nothing": (["record", *SUITE, "--model", "openai/gpt-4.1", "--thinking-budget", "1024",
                                   "--max-output-tokens", "4096"], "would do nothing: drop it"),
    "bad policy file": (["record", *SUITE, "--model", "scripted/null", "--policy", "BAD_POLICY"], "not valid TOML"),
    "no such task": (["record", "--suite", str(ROOT / "tasks"), "--task", "nope", "--model", "scripted/null"],
                     "no task named nope"),
    "an empty suite, record mode once": (["record", "--suite", "EMPTY", "--record-mode", "once", "--model",
                                          "scripted/null"], "no task in "),
    "no such task, record mode new_episodes": (["record", "--suite", str(ROOT / "tasks"), "--task", "nope",
                                                "--record-mode", "new_episodes", "--model", "scripted/null"],
                                               "no task named nope"),
    "unpriced --max-usd": (["record", *SUITE, "--model", "openai/gpt-4.1", "--max-usd", "1"],
                           "--max-usd needs a price for openai/gpt-4.1"),
    "unreachable server": (["record", *SUITE, "--model", "openai-compatible/x", "--base-url", "http://127.0.0.1:9/v1"],
                           "nothing answers at http://127.0.0.1:9/v1"),
    "no engine answers": (["record", *SUITE, "--model", "scripted/null"], "but none answers at"),
    "fork without --replay": (["record", *SUITE, "--fork-at", "1", "--model", "scripted/null"],
                              "--fork-at needs --replay"),
    "fork of a missing parent": (["record", *SUITE, "--fork-at", "1", "--replay", "nowhere", "--model",
                                  "scripted/null"], "replay folder nowhere does not exist"),
    "fork onto an installed agent": (["record", *SUITE, *FORK, "--agent", "claude-code", "--model",
                                      "scripted-anthropic/reference"], "recorded with agent endstate"),
    "fork and a record mode": (["record", *SUITE, *FORK, "--record-mode", "once", "--model", "scripted/null"],
                               "two ways to record: pass one"),
    "fork on ray": (["record", *SUITE, *FORK, "--executor", "ray", "--model", "scripted/null"],
                    "run on the local executor only"),
    "fork, no engine answers": (["record", *SUITE, *FORK, "--model", "scripted/null"], "but none answers at"),
    "eval fork of a missing parent": (["eval", *SUITE, "--fork-at", "1", "--replay", "nowhere", "--model",
                                       "scripted/null"], "replay folder nowhere does not exist"),
    "eval fork, no such task": (["eval", "--suite", str(ROOT / "tasks"), "--task", "nope", *FORK, "--model",
                                 "scripted/null"], "no task named nope"),
    "eval fork onto an installed agent": (["eval", *SUITE, *FORK, "--agent", "claude-code", "--model",
                                           "scripted-anthropic/reference"], "recorded with agent endstate"),
    "eval fork, unpriced --max-usd": (["eval", *SUITE, *FORK, "--model", "openai/gpt-4.1", "--max-usd", "1"],
                                      "--max-usd needs a price"),
    "eval fork into an earlier run": (["eval", *SUITE, *FORK, "--model", "scripted/null", "--out", "EARLIER_RUN"],
                                      "already holds a run"),
    "eval fork, no engine answers": (["eval", *SUITE, *FORK, "--model", "scripted/null"], "but none answers at"),
}


def _inputs(folder: Path, args: list[str]) -> list[str]:
    """`args` with each placeholder replaced by an input made in `folder`."""
    (folder / "EMPTY").mkdir()
    (folder / "bad.toml").write_text("rules = [")
    (folder / "earlier").mkdir()
    shutil.copy(ROOT / "bench" / "results" / "controls" / "scripted-null" / "results.json", folder / "earlier")
    made = {"EMPTY": str(folder / "EMPTY"), "BAD_POLICY": str(folder / "bad.toml"), "EARLIER_RUN": str(folder / "earlier")}
    return [made.get(word, word) for word in args]


@pytest.mark.parametrize("case", REFUSED)
def test_a_refused_record_or_fork_leaves_no_folder(tmp_path, monkeypatch, case):
    args, said = REFUSED[case]
    monkeypatch.chdir(tmp_path)
    args = _inputs(tmp_path, args)
    before = sorted(tmp_path.rglob("*"))
    result = invoke_endstate(*args, env=NO_ENGINE)
    assert result.code == 2 and "Traceback" not in result.output, result
    assert said in result.output.strip().splitlines()[-1], result
    assert sorted(tmp_path.rglob("*")) == before, f"left behind: {sorted(set(tmp_path.rglob('*')) - set(before))}"


def test_the_local_sandbox_refusal_leaves_no_folder(tmp_path, monkeypatch):
    import endstate.cli._preflight as preflight

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(preflight, "LOCAL_PATH", str(tmp_path / "no-bin"))  # a host with none of the programs
    for args in (["record", *SUITE, "--model", "scripted/reference"], ["eval", *SUITE, *FORK, "--model", "scripted/null"]):
        result = invoke_endstate(*args, "--sandbox", "local", env=NO_ENGINE)
        assert result.code == 2 and "--sandbox local runs this host's programs" in result.output, result
        assert not any(tmp_path.iterdir()), sorted(tmp_path.rglob("*"))


@pytest.mark.docker
def test_a_refused_resume_leaves_no_folder(tmp_path, monkeypatch):
    """Refused by the run itself, once the engine answered: nothing to resume in --out."""
    monkeypatch.chdir(tmp_path)
    for args in (["record", *SUITE, "--model", "scripted/null", "--cassettes", "c/d"], ["eval", *SUITE, *FORK,
                                                                                        "--model", "scripted/null"]):
        result = invoke_endstate(*args, "--resume", "--out", "o/p")
        assert result.code == 2 and "cannot resume: o/p holds no run" in result.output, result
        assert not any(tmp_path.iterdir()), sorted(tmp_path.rglob("*"))


def test_a_record_that_ran_keeps_its_folders(tmp_path, monkeypatch):
    """What is removed is a folder still empty at the end: one a run wrote into stays, with what it wrote."""
    from endstate.cli._run import _no_empty_folder_left

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit), _no_empty_folder_left(Path("runs/a"), Path("cassettes/b")):
        Path("runs/a").mkdir(parents=True)
        Path("cassettes/b").mkdir(parents=True)
        (Path("cassettes/b") / "t.cassette").write_text("x")
        raise SystemExit(1)
    assert sorted(str(p) for p in Path(".").rglob("*")) == ["cassettes", "cassettes/b", "cassettes/b/t.cassette"]
