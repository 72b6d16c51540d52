"""endstate's Harbor tasks as Harbor itself reads them: harbor-tasks/ and the Harbor export of tasks/
pass `harbor lint` (Harbor's own CLI, from the venv `make peers` makes), endstate's own settings
live in endstate.toml beside task.toml, and an exported task's verifier passes the solution and
fails the fixture."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke_endstate

from endstate.authoring import export_harbor_task
from endstate.authoring._harborspec import EndstateSettings, endstate_settings, read_toml
from endstate.errors import UserError
from endstate.sandbox import DEFAULT_IMAGE
from endstate.task import load_task

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "harbor-tasks"
LRU = "bugfix-lru-eviction"


def _lint(*folders: Path, rules: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    harbor = Path(os.environ["ENDSTATE_PEERS"]) / "harbor"
    return subprocess.run([str(harbor), "lint", *rules, *map(str, folders)], capture_output=True, text=True,
                          timeout=300)


def test_endstates_settings_live_beside_task_toml_not_in_it(tmp_path):
    for source in sorted(SOURCES.iterdir()):
        assert "endstate" not in read_toml(source / "task.toml"), source
        settings = endstate_settings(source, read_toml(source / "task.toml"))
        assert settings == EndstateSettings("agent", "changed")
    with pytest.raises(UserError, match=r"an \[endstate\] table is not Harbor's .* move its fields into .*endstate.toml"):
        endstate_settings(tmp_path, {"endstate": {"user": "agent"}})
    (tmp_path / "endstate.toml").write_text('user = "agent"\nsea = "whole"\n')
    with pytest.raises(UserError, match="endstate.toml: takes user"):
        endstate_settings(tmp_path, {})


def test_the_export_writes_a_harbor_task_and_names_what_it_loses(tmp_path):
    lost = export_harbor_task(load_task(ROOT / "tasks" / LRU), tmp_path)
    assert lost == ["no_new_skips", "probe"]
    task = tmp_path / LRU
    manifest = read_toml(task / "task.toml")
    assert manifest["verifier"]["environment_mode"] == "separate" and manifest["artifacts"] == ["/app"]
    assert (task / "tests" / "Dockerfile").read_text().startswith("# The verifier's image")
    assert (task / "tests" / "holdout" / "tests_holdout" / "test_lru_updates.py").is_file()
    assert (task / "instruction.md").read_text() == (ROOT / "tasks" / LRU / "prompt.md").read_text()
    refused = invoke_endstate("export", "--format", "harbor")
    assert refused.code == 2 and "--suite" in refused.output


@pytest.mark.docker
def test_an_exported_verifier_passes_the_solution_and_fails_the_fixture(tmp_path):
    export_harbor_task(load_task(ROOT / "tasks" / LRU), tmp_path)
    task = tmp_path / LRU
    script = ("for end in fixture solved; do rm -rf /app && cp -r /task/environment/app /app && "
              "{ [ $end = fixture ] || bash /task/solution/solve.sh >/dev/null; } && bash /tests/test.sh >/dev/null; "
              "echo $end=$(cat /logs/verifier/reward.txt); done")
    ran = subprocess.run(["docker", "run", "--rm", "--network", "none", "--user", "root", "-v", f"{task}:/task:ro",
                          "-v", f"{task / 'tests'}:/tests:ro", DEFAULT_IMAGE, "bash", "-c", script],
                         capture_output=True, text=True, timeout=300)
    assert ran.stdout.split() == ["fixture=0", "solved=1"], ran.stdout + ran.stderr


@pytest.mark.peers
def test_harbor_lint_passes_the_shipped_harbor_tasks_and_the_export_of_tasks(tmp_path):
    shipped = _lint(*sorted(SOURCES.iterdir()))
    assert shipped.returncode == 0, shipped.stdout + shipped.stderr
    made = invoke_endstate("export", "--format", "harbor", "--suite", str(ROOT / "tasks"), "--out",
                                     str(tmp_path))
    assert made.code == 0 and "22 task(s) written" in made.output, made.output
    exported = _lint(*sorted(tmp_path.iterdir()))
    assert exported.returncode == 0, exported.stdout + exported.stderr
    # Every rule but a pinned digest (no registry here to pin from): the agent is uid 1000, as in endstate.
    strict = _lint(*sorted(tmp_path.iterdir()), rules=("--select", "ALL", "--ignore", "unpinned-image"))
    assert strict.returncode == 0, strict.stdout + strict.stderr


def test_what_a_separate_verifiers_image_installs_is_added_where_the_tasks_image_lacks_it(tmp_path):
    from endstate.authoring._harborspec import verifier_packages

    (tmp_path / "environment").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "environment" / "Dockerfile").write_text("FROM debian\nRUN apt-get install -y gcc\n")
    (tmp_path / "tests" / "Dockerfile").write_text("FROM debian\nRUN apt-get install -y gcc jq bats\n")
    said: list[str] = []
    assert verifier_packages(tmp_path, "apt-get install -y bats\n", said.append) == ["bats", "jq"]
    assert said == ["tests/test.sh installs bats", "its verifier's image (tests/Dockerfile) installs jq"]
