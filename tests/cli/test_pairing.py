"""A run's parts checked against each other before any sandbox starts: one line, exit 2.

No engine answers in these runs (DOCKER_HOST points nowhere): a command that got past its
checks would stop on that instead, with another message."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import invoke_endstate

ROOT = Path(__file__).resolve().parents[2]
TASK = "bugfix-lru-eviction"
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock", "OPENAI_API_KEY": "sk-test-not-a-real-key",
             "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key"}


def run(*args: str, tmp_path: Path) -> tuple[int, str]:
    result = invoke_endstate(*args, "--suite", str(ROOT / "tasks"), "--task", TASK, "--out", str(tmp_path / "out"),
                             env=NO_ENGINE)
    assert "Traceback" not in result.output, result.output
    assert not (tmp_path / "out" / "results.json").exists(), "refused before any run was written"
    return result.code, result.output


@pytest.mark.parametrize(("agent", "model", "right"), [
    ("claude-code", "scripted/reference", "--model scripted-anthropic/reference"),
    ("codex", "scripted/null", "--model scripted-responses/null"),
    ("mini-swe-agent", "scripted-anthropic/reference", "--model scripted/reference"),
    ("codex", "openai/gpt-4.1", "--model openai-responses/<model>"),
    ("claude-code", "openai-compatible/qwen", "--model anthropic/<model>"),
])
def test_an_agent_and_a_model_of_another_wire_format_are_refused_naming_the_right_one(tmp_path, agent, model, right):
    extra = ("--base-url", "http://127.0.0.1:9/v1") if model.startswith("openai-compatible/") else ()
    code, said = run("eval", "--agent", agent, "--model", model, *extra, tmp_path=tmp_path)
    assert code == 2, said
    line, = said.strip().splitlines()
    assert line.startswith(f"endstate: error: --agent {agent} speaks ") and line.endswith(f"use {right}"), line


@pytest.mark.parametrize(("args", "named"), [
    (("--model", "openai/gpt-4.1", "--thinking-budget", "1024", "--max-output-tokens", "4096"), "--thinking-budget"),
    (("--model", "openai-compatible/x", "--base-url", "http://127.0.0.1:9/v1", "--prompt-cache"), "--prompt-cache"),
    (("--model", "openai-responses/o4-mini", "--prompt-cache"), "--prompt-cache"),
    (("--model", "anthropic/claude-x", "--reasoning-effort", "low"), "--reasoning-effort"),
    (("--agent", "mini-swe-agent", "--model", "scripted/null", "--reasoning-effort", "low"), "--reasoning-effort"),
])
def test_a_setting_the_model_would_never_be_sent_is_refused(tmp_path, args, named):
    code, said = run("eval", *args, tmp_path=tmp_path)
    assert code == 2, said
    line, = said.strip().splitlines()
    assert line.startswith(f"endstate: error: {named} ") and "would do nothing: drop it" in line, line


def test_settings_the_provider_sends_still_pass_the_preflight(tmp_path):
    code, said = run("eval", "--model", "anthropic/claude-x", "--thinking-budget", "1024", "--max-output-tokens",
                     "4096", "--prompt-cache", tmp_path=tmp_path)
    assert "would do nothing" not in said and "speaks" not in said, said  # it got as far as the engine
    assert code != 0 and "nonexistent.sock" in said, said


@pytest.mark.parametrize("command", [["eval", "--model", "scripted/null", "--task", TASK, "--out", ""],
                                     ["record", "--model", "scripted/null", "--task", TASK, "--cassettes", ""],
                                     ["report", str(ROOT / "bench" / "results" / "controls" / "scripted-null"), "--out", ""],
                                     ["view", str(ROOT / "bench" / "results" / "controls" / "scripted-null"), "-o", ""],
                                     ["tasks", "import", "harbor", str(ROOT / "harbor-tasks"), "--out", ""]])
def test_an_empty_output_option_is_refused(tmp_path, command, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    result = cli.invoke(*command, env=NO_ENGINE)
    assert result.code == 2 and "': is empty: name where to write (an empty value means the current folder)" \
        in result.output, result.output
    assert not any(tmp_path.iterdir())


def _host(tmp_path: Path, monkeypatch, programs: tuple[str, ...], python3: str = "exit 0") -> None:
    """The local sandbox's PATH holds `programs` alone (each does nothing), and a python3 running `python3`
    (a shell line: `exit 0` imports every module, `exit 1` none)."""
    import endstate.cli._preflight as preflight

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in programs:
        (bin_dir / program).write_text("#!/bin/sh\n" + (python3 if program == "python3" else "") + "\n")
        (bin_dir / program).chmod(0o755)
    monkeypatch.setattr(preflight, "LOCAL_PATH", str(bin_dir))


#: What the shipped task's commands start besides Python (its reference trajectory's shell lines).
_TOOLS = ("bash", "cat", "ls", "grep", "head", "tail", "rm", "install")


def test_the_local_sandbox_without_python_is_refused(tmp_path, monkeypatch):
    _host(tmp_path, monkeypatch, ("python3", *_TOOLS))  # python3 but no python: a Debian host as it comes
    code, said = run("eval", "--model", "scripted/reference", "--sandbox", "local", tmp_path=tmp_path)
    assert code == 2, said
    line, = said.strip().splitlines()
    assert line.startswith("endstate: error: --sandbox local runs this host's programs and there is no `python` in ")
    assert f"(task {TASK}, reference step " in line, line
    assert line.endswith("apt-get install python-is-python3, or use --sandbox docker"), line


def test_the_local_sandbox_whose_python3_has_no_pytest_is_refused(tmp_path, monkeypatch):
    """The grading harness runs a task's tests with this host's python3, whatever its command calls Python."""
    _host(tmp_path, monkeypatch, ("python", "python3", *_TOOLS), python3="exit 1")
    code, said = run("eval", "--model", "scripted/reference", "--sandbox", "local", tmp_path=tmp_path)
    assert code == 2, said
    line, = said.strip().splitlines()
    assert line.startswith("endstate: error: --sandbox local runs this host's programs, and this host's python3, "
                           "which runs the tests, cannot import pytest (task bugfix-lru-eviction, grader "), line
    assert line.endswith("apt-get install python3-pytest, or use --sandbox docker"), line


def test_the_local_sandbox_without_bash_is_refused(tmp_path, monkeypatch):
    _host(tmp_path, monkeypatch, ("python", "python3", *_TOOLS[1:]))
    code, said = run("eval", "--model", "scripted/reference", "--sandbox", "local", tmp_path=tmp_path)
    assert code == 2 and "there is no `bash` in " in said and "every command: `bash -c COMMAND`" in said, said


def test_auto_falling_back_to_the_local_sandbox_checks_its_programs_too(tmp_path, monkeypatch):
    """No engine on this machine: --sandbox auto would run on bubblewrap, where the known-fix arm would
    FAIL for want of `python` and exit 0; it is refused as --sandbox local is, naming the engine as the fix."""
    from endstate.sandbox import _engine

    _host(tmp_path, monkeypatch, ("python3", *_TOOLS))
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setattr(_engine, "DEFAULT_SOCKET", str(tmp_path / "no-engine.sock"))
    result = invoke_endstate("eval", "--model", "scripted/reference", "--suite", str(ROOT / "tasks"), "--task", TASK,
                             "--out", str(tmp_path / "out"))
    assert result.code == 2, result
    line, = result.output.strip().splitlines()
    assert line.startswith("endstate: error: --sandbox auto found no Docker engine on this machine and would run this "
                           "host's programs and there is no `python` in "), line
    assert line.endswith("apt-get install python-is-python3, or start a Docker engine"), line
    assert not (tmp_path / "out").exists()


def test_the_local_sandbox_with_the_programs_is_not_refused(tmp_path, monkeypatch):
    import endstate.cli._preflight as preflight
    from endstate.task import load_suite

    _host(tmp_path, monkeypatch, ("python", "python3", *_TOOLS))
    tasks, errors = load_suite(ROOT / "tasks")
    assert tasks and not errors
    preflight._check_local_programs(tasks, "--sandbox local runs this host's programs", "use --sandbox docker")


@pytest.mark.parametrize("mode", ["once", "new_episodes"])
def test_a_record_mode_that_would_keep_another_model_s_cassette_is_refused(tmp_path, mode):
    import shutil

    folder = tmp_path / "cassettes"
    folder.mkdir()
    shutil.copy(ROOT / "cassettes" / "scripted-reference" / f"{TASK}.cassette", folder)
    code, said = run("record", "--record-mode", mode, "--model", "scripted/null", "--cassettes", str(folder),
                     tmp_path=tmp_path)
    assert code == 2, said
    line, = said.strip().splitlines()
    assert line == (f"endstate: error: --record-mode {mode} would keep {folder / TASK}.cassette, recorded with "
                    "scripted/reference, as a recording of scripted/null: pass the --cassettes folder of this model "
                    "and agent"), line
