"""The pytest plugin, run as a user's CI would: `pytest --endstate-suite ... --endstate-replay ...`
in a fresh pytest process, over a few tasks of the shipped suite and both control arms."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from endstate.run import read_results

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "tasks"
CASSETTES = ROOT / "cassettes"
#: -k picks a bug fix and the checkpoint task (killed and resumed), out of the whole suite.
PICK = "lru or append-migration"
PICKED = ["bugfix-lru-eviction", "checkpoint-append-migration"]


def pytest_run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """A fresh pytest process in `cwd` (not this project: none of its tests or settings)."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


def test_without_its_option_the_plugin_changes_nothing(tmp_path):
    (tmp_path / "test_plain.py").write_text(
        "import sys\n"
        "def test_plain(request):\n"
        "    assert request.config.pluginmanager.has_plugin('endstate')\n"
        "    heavy = [m for m in ('endstate.run', 'endstate.sandbox', 'docker', 'ray') if m in sys.modules]\n"
        "    assert not heavy, heavy\n"
        "def test_other():\n"
        "    pass\n")
    ran = pytest_run("-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout
    with_plugin = pytest_run("--collect-only", "-q", cwd=tmp_path)
    without = pytest_run("--collect-only", "-q", "-p", "no:endstate", cwd=tmp_path)
    def collected(ran: subprocess.CompletedProcess) -> list[str]:
        return [line for line in ran.stdout.splitlines() if "::" in line]

    assert collected(with_plugin) == collected(without) == ["test_plain.py::test_plain", "test_plain.py::test_other"]


@pytest.mark.parametrize("args, message", [
    (["--endstate-suite", "tasks"], "--endstate-suite needs --endstate-replay DIR"),
    (["--endstate-suite", "no-such-folder", "--endstate-replay", "x"], "--endstate-suite no-such-folder: no such"),
    # Given alone, the plugin's options were ignored and the project's own tests collected instead.
    (["--endstate-replay", "cassettes"], "--endstate-replay needs --endstate-suite DIR"),
    (["--endstate-out", "runs/x"], "--endstate-out needs --endstate-suite DIR"),
    (["--endstate-agent", "mini-swe-agent"], "--endstate-agent needs --endstate-suite DIR"),
    # A folder with no task passed as "no tests ran", exit 5; a task folder as the suite, the same.
    (["--endstate-suite", "empty", "--endstate-replay", "cassettes"],
     "--endstate-suite empty: no task in it (a task is a folder holding task.toml)"),
    (["--endstate-suite", "tasks/one", "--endstate-replay", "cassettes"],
     "--endstate-suite tasks/one is a task folder, not a suite of them: pass the folder it is in, "),
])
def test_bad_options_are_one_line(tmp_path, args, message):
    (tmp_path / "tasks" / "one").mkdir(parents=True)
    (tmp_path / "tasks" / "one" / "task.toml").write_text('id = "one"\n')
    (tmp_path / "empty").mkdir()
    (tmp_path / "cassettes").mkdir()
    ran = pytest_run(*args, cwd=tmp_path)
    assert ran.returncode == 4, ran.stdout + ran.stderr
    assert message in ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout


@pytest.mark.docker
def test_reference_arm_passes_one_item_per_selected_task(tmp_path):
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", str(CASSETTES / "scripted-reference"),
                     "-k", PICK, "--endstate-jobs", "2", "--endstate-out", str(tmp_path / "run"), "-v", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed, 20 deselected" in ran.stdout
    for task in PICKED:
        assert f"::{task} PASSED" in ran.stdout
    result = read_results(tmp_path / "run")  # the usual results folder, model read from the cassettes
    assert result.vector == [(task, "pass") for task in PICKED]
    assert result.card.model == "scripted/reference" and result.card.mode == "replay"


@pytest.mark.docker
def test_null_arm_fails_each_item_with_its_graders_reason(tmp_path):
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", str(CASSETTES / "scripted-null"),
                     "-k", PICK, "--endstate-jobs", "2", "--endstate-out", str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "2 failed, 20 deselected" in ran.stdout
    result = read_results(tmp_path / "run")
    for task in result.tasks:
        assert task.outcome == "fail"
        # The failure section is the task's report: outcome, failing grader and its reason, verdicts.
        section = ran.stdout.split(f"endstate task {task.task_id} ")[1].split("\n_____")[0]
        assert f"fail: {task.failing_grader}: {task.reason[:60]}" in section
        assert "graders: " in section and "transcript: " in section
    assert "Traceback" not in ran.stdout and "def runtest" not in ran.stdout


@pytest.mark.docker
def test_a_task_that_cannot_replay_fails_with_the_harness_reason(tmp_path):
    """Another model's cassettes: the item says why in one line, as `endstate eval` would."""
    wrong = tmp_path / "cassettes"
    wrong.mkdir()
    (wrong / "bugfix-lru-eviction.cassette").write_bytes(
        (CASSETTES / "scripted-null" / "bugfix-lru-eviction.cassette").read_bytes())
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", str(wrong), "-k", "lru",
                     "--endstate-model", "scripted/reference", "--endstate-out", str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    # Refused before any sandbox, in `endstate eval --replay`'s words with the plugin's option.
    assert ("the suite did not run: --endstate-model scripted/reference contradicts the cassettes in "
            f"{wrong}, recorded with scripted/null: drop --endstate-model") in ran.stdout
    assert "Traceback" not in ran.stdout and not (tmp_path / "run").exists()


@pytest.mark.docker
def test_a_recording_with_its_own_settings_replays_as_eval_replays_it(tmp_path):
    """SmolLM2 was recorded at temperature 0.7, seed 2: the plugin asks with the recording's settings,
    as `endstate eval --replay` does, and gets the recorded run's verdict, not a divergence."""
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", str(CASSETTES / "smollm2-tools-seed-2"),
                     "-k", "lru", "--endstate-out", str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    (task,) = read_results(tmp_path / "run").tasks
    [recorded] = [t for t in read_results(ROOT / "bench" / "results" / "smollm2-tools-seed-2").tasks
                  if t.task_id == task.task_id]
    assert (task.outcome, task.tree_hash) == (recorded.outcome, recorded.tree_hash)
    assert "diverged" not in ran.stdout


@pytest.mark.docker
def test_an_installed_agents_recording_replays_with_its_agent(tmp_path):
    """mini-swe-agent's reference recording passes under `--endstate-agent`, as under `eval --agent`, into
    the folder eval writes by default: named for the agent, not that of endstate's own loop on the model."""
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay",
                     str(CASSETTES / "mini-swe-agent-scripted-reference"), "--endstate-agent", "mini-swe-agent",
                     "-k", "lru", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run = read_results(tmp_path / "runs" / "mini-swe-agent-scripted-reference")
    (task,) = run.tasks
    assert task.outcome == "pass" and run.card.agent.startswith("mini-swe-agent")
    assert not (tmp_path / "runs" / "scripted-reference").exists()


def test_record_mode_once_records_only_the_task_without_a_cassette(tmp_path):
    import shutil

    cassettes = tmp_path / "cassettes"
    cassettes.mkdir()
    shutil.copyfile(CASSETTES / "scripted-reference" / "bugfix-lru-eviction.cassette",
                    cassettes / "bugfix-lru-eviction.cassette")
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", str(cassettes), "-k",
                     "lru or invoice-rounding", "--endstate-record-mode", "once", "--endstate-model",
                     "scripted/reference", "--endstate-out", str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "endstate: bugfix-lru-eviction: replayed: every turn from its cassette" in ran.stdout
    assert "endstate: bugfix-invoice-rounding: recorded live" in ran.stdout
    assert (cassettes / "bugfix-invoice-rounding.cassette").is_file()
    assert (cassettes / "bugfix-lru-eviction.cassette").read_bytes() == (
        CASSETTES / "scripted-reference" / "bugfix-lru-eviction.cassette").read_bytes()


def test_a_record_mode_without_a_model_is_one_line(tmp_path):
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", str(CASSETTES / "scripted-reference"),
                     "--endstate-record-mode", "new_episodes", cwd=tmp_path)
    assert ran.returncode != 0
    assert "--endstate-record-mode new_episodes records: pass --endstate-model" in ran.stderr
    assert "Traceback" not in ran.stderr


@pytest.mark.docker
def test_a_changed_task_names_the_plugins_own_match_option(tmp_path):
    """The refusal is `endstate eval`'s; its fix is spelled as it is given to pytest."""
    import shutil

    suite = tmp_path / "tasks"
    shutil.copytree(TASKS / "bugfix-lru-eviction", suite / "bugfix-lru-eviction")
    with open(suite / "bugfix-lru-eviction" / "prompt.md", "a") as prompt:
        prompt.write("\nOne more line.\n")
    ran = pytest_run("--endstate-suite", str(suite), "--endstate-replay", str(CASSETTES / "scripted-reference"),
                     "--endstate-out", str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    (task,) = read_results(tmp_path / "run").tasks
    assert "changed since cassette" in task.reason and "--match sequence" in task.reason  # the CLI's words on disk
    # The item's report; the short summary may quote it again, cut to the terminal's width.
    [line] = [line for line in ran.stdout.splitlines()
              if "changed since cassette" in line and not line.startswith(("FAILED ", "ERROR "))]
    assert line.endswith("or replay with --endstate-match sequence"), line
    assert " --match" not in ran.stdout and "Traceback" not in ran.stdout


def test_a_replay_folder_without_the_tasks_cassettes_says_so(tmp_path):
    """Every item names the folder and the file it lacks, not the model it could not read; and no
    results file is announced, none having been written."""
    (tmp_path / "cassettes").mkdir()
    ran = pytest_run("--endstate-suite", str(TASKS), "--endstate-replay", "cassettes", "-k", "lru",
                     "--endstate-out", str(tmp_path / "run"), cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ("the suite did not run: cassettes holds no cassette of these tasks (e.g. "
            "cassettes/bugfix-lru-eviction.cassette): pass the folder `endstate record` wrote them to as "
            "--endstate-replay") in ran.stdout
    assert "endstate results:" not in ran.stdout and not (tmp_path / "run").exists()
