"""`endstate tasks import harbor`: Harbor task folders (tests/data/harbor: one in Python, one
in plain shell) become endstate tasks graded by their own tests/test.sh, held out.

In Docker: a task whose base image the engine lacks is refused in one line naming --base;
with --base endstate-sandbox:2 both import, and `tasks check` runs them both ways for real
(the fixture fails on its reward, solve.sh played as the reference reaches the solution,
the two hacks each import writes are caught by the verifier). Bad input is one line
naming the file or field, without Docker.
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.sandbox import DEFAULT_IMAGE, build_image

DATA = Path(__file__).resolve().parent.parent / "data" / "harbor"


def _copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(DATA / name, tmp_path / name)
    return tmp_path / name


def _one_line_error(ran: subprocess.CompletedProcess) -> str:
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
    (line,) = ran.stderr.strip().splitlines()
    return line


def test_a_missing_instruction_is_one_line_naming_it(tmp_path):
    task = _copy(tmp_path, "sh-word-count")
    (task / "instruction.md").unlink()
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(task), "--out", str(tmp_path / "out")))
    assert line.startswith(f"endstate: error: {task / 'instruction.md'}: missing"), line


@pytest.mark.parametrize(("text", "says"), [
    ("[agent\ntimeout_sec = 1\n", "task.toml: not valid TOML"),
    ('[agent]\ntimeout_sec = "soon"\n', "task.toml: field `agent.timeout_sec` is 'soon': give a positive number"),
    ('[environment]\nmemory = "lots"\n', "task.toml: field `environment.memory` is 'lots'"),
])
def test_a_bad_task_toml_is_one_line_naming_the_field(tmp_path, text, says):
    task = _copy(tmp_path, "py-median")
    (task / "task.toml").write_text(text)
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(task), "--out", str(tmp_path / "out")))
    assert f"{task}/{says}" in line, line


def test_a_folder_without_harbor_tasks_is_refused(tmp_path):
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(tmp_path), "--out", str(tmp_path / "out")))
    assert "no task.toml here or in its subfolders" in line, line


@pytest.mark.docker
def test_a_base_image_the_engine_lacks_is_one_line_naming_the_way_out(tmp_path):
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(DATA / "py-median"), "--out", str(tmp_path)))
    assert line == ("endstate: error: task py-median: its Dockerfile builds FROM python:3.12-slim, which the engine "
                    "does not have and no registry can be reached: `docker pull python:3.12-slim` where one can, or "
                    "map it to an image the engine has with --base-image python:3.12-slim=IMAGE (--base "
                    "endstate-sandbox:2 builds its RUN steps on endstate's sandbox image)")
    assert not (tmp_path / "py-median").exists()


@pytest.mark.docker
def test_a_base_image_mapped_to_one_the_engine_lacks_names_that_one(tmp_path):
    ran = run_endstate("tasks", "import", "harbor", str(DATA / "py-median"), "--out", str(tmp_path),
                       "--base-image", "python:3.12-slim=ubuntu:24.04")
    assert "builds FROM ubuntu:24.04, which the engine does not have" in _one_line_error(ran)


@pytest.mark.parametrize("pair", ["python:3.12-slim", "=endstate-sandbox:2", "python:3.12-slim="])
def test_a_malformed_base_image_mapping_is_one_line(tmp_path, pair):
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(DATA / "py-median"), "--out", str(tmp_path),
                                        "--base-image", pair))
    assert line == (f"endstate: error: --base-image {pair!r}: give FROM=TO, an image a Dockerfile names and one the "
                    "engine has (e.g. python:3.12-slim=endstate-sandbox:2)")


def test_every_from_line_is_mapped_and_build_stages_are_not_images():
    from endstate.authoring._harbor import _rebased

    dockerfile = "FROM golang:1.22 AS build\nRUN go build\nFROM debian:bookworm-slim\nCOPY --from=build /x /x\n"
    text, named = _rebased(dockerfile, None, {"golang:1.22": "go-here:1", "debian:bookworm-slim": "endstate-sandbox:2"})
    assert text == "FROM go-here:1 AS build\nRUN go build\nFROM endstate-sandbox:2\nCOPY --from=build /x /x\n"
    assert named == ["go-here:1", "endstate-sandbox:2"]
    assert _rebased("FROM build-stage AS b\nFROM b\n", None)[1] == ["build-stage"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    build_image(DEFAULT_IMAGE)  # a no-op when it is current
    out = tmp_path_factory.mktemp("harbor") / "suite"
    # py-median builds FROM python:3.12-slim, which the engine lacks: mapped to the sandbox image.
    ran = run_endstate("tasks", "import", "harbor", str(DATA), "--out", str(out), "--base-image",
                       f"python:3.12-slim={DEFAULT_IMAGE}")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"2 task(s) written to {out}" in ran.stdout
    return out


@pytest.mark.docker
def test_the_import_keeps_prompt_budgets_tests_and_oracle(imported):
    task = imported / "py-median"
    manifest = tomllib.loads((task / "task.toml").read_text())
    assert manifest["budget"] == {"wall_seconds": 300}
    # No USER in its Dockerfile: its agent is root, as Harbor runs it.
    assert manifest["sandbox"] == {"dockerfile": "image/Dockerfile", "cpus": 1, "memory_mb": 1024, "user": "root"}
    assert manifest["graders"][0] == {"name": "endstate.grading:verifier",
                                      "args": {"script": ".harbor/tests/test.sh", "timeout": 60,
                                               "tools": "/opt/endstate-verifier/bin"}}
    assert (task / "prompt.md").read_text() == (DATA / "py-median/instruction.md").read_text()
    assert sorted(p.name for p in (task / "holdout/.harbor/tests").iterdir()) == ["test.sh", "test_stats.py"]
    # The fixture is the working folder as the image has it; the solution what solve.sh made of it.
    assert (task / "fixture/stats.py").read_text() == (DATA / "py-median/environment/stats.py").read_text()
    assert "(ordered[middle - 1] + ordered[middle]) / 2" in (task / "solution/stats.py").read_text()
    assert "FROM endstate-sandbox:2\n" in (task / "image/Dockerfile").read_text()
    assert tomllib.loads((imported / "sh-word-count/task.toml").read_text())["sandbox"]["memory_mb"] == 512


@pytest.mark.docker
def test_tasks_check_runs_both_imported_tasks_both_ways(imported):
    ran = run_endstate("tasks", "check", "--suite", str(imported))
    assert ran.returncode == 0 and "2 of 2 task(s) check out" in ran.stdout, ran.stdout + ran.stderr
    # py-median's test_stats.py gets the third hack, its tests deleted; sh-word-count has only test.sh.
    rows = "hack:edit-verifier=fail[verifier], hack:reward-in-workspace=fail[verifier], impossible=skipped, " \
           "reference=solution"
    for name, deleted in (("py-median", "hack:delete-tests=fail[verifier], "), ("sh-word-count", "")):
        (line,) = [line for line in ran.stdout.splitlines() if line.startswith(f"ok   {name} ")]
        assert line.endswith(f"fixture=fail[verifier], solution=pass, {deleted}{rows}"), line


@pytest.mark.docker
@pytest.mark.parametrize(("arm", "outcome"), [("reference", "pass"), ("null", "fail")])
def test_both_control_arms_run_live_on_an_imported_task(imported, tmp_path, arm, outcome):
    from endstate.run import read_results

    ran = run_endstate("eval", "--suite", str(imported), "--task", "sh-word-count", "--model", f"scripted/{arm}",
                       "--out", str(tmp_path))
    (result,) = read_results(tmp_path).tasks
    assert result.outcome == outcome, ran.stdout + ran.stderr
    assert next(v for v in result.verdicts if v.grader == "verifier").outcome == outcome


@pytest.mark.docker
def test_an_oracle_that_fails_offline_is_one_line_and_leaves_no_task(tmp_path):
    task = _copy(tmp_path, "sh-word-count")
    (task / "solution/solve.sh").write_text("echo cannot reach the network\nexit 3\n")
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(task), "--out", str(tmp_path / "out")))
    assert line == ("endstate: error: task sh-word-count: its solution/solve.sh exited 3: cannot reach the network: "
                    "the oracle must run offline in the task's image")
    assert list((tmp_path / "out").iterdir()) == []


def test_two_tasks_of_one_id_are_refused_before_anything_is_written(tmp_path):
    first, second = _copy(tmp_path / "a", "py-median"), _copy(tmp_path / "b", "py-median")
    line = _one_line_error(run_endstate("tasks", "import", "harbor", str(first), str(second),
                                        "--out", str(tmp_path / "out")))
    assert line == (f"endstate: error: {second}: its task id py-median is also {first}'s: import them into "
                    "different --out folders, or rename one")
    assert not (tmp_path / "out").exists()


def test_the_apt_packages_a_verifier_installs_are_read_from_its_test_sh():
    from endstate.authoring._harbortools import apt_packages

    script = ("#!/bin/bash\nset -euo pipefail\napt-get update > /dev/null 2>&1\n"
              "apt-get install -y curl > /dev/null 2>&1\n"
              "apt-get update -qq && apt-get install -y -qq bats \\\n   make >/dev/null\n"
              "DEBIAN_FRONTEND=noninteractive sudo apt install -y -o Dpkg::Use-Pty=0 nodejs=18.19.0+dfsg-6; echo ok\n"
              "echo apt-get install not-a-command\n# apt-get install commented-out\n"
              "apt-get install -y $FROM_A_VARIABLE\n")
    assert apt_packages(script) == ["curl", "bats", "make", "nodejs=18.19.0+dfsg-6"]


@pytest.mark.docker
def test_a_verifier_package_the_import_could_not_read_fails_naming_it(tmp_path):
    """A package named through a variable is not in the image: grading is offline, so the
    verifier's own apt-get line fails there, and the shim says which package and why."""
    task = _copy(tmp_path, "sh-word-count")
    (task / "tests/test.sh").write_text('#!/bin/bash\nset -e\ntool=bats\napt-get update\napt-get install -y "$tool"\n'
                                        + (DATA / "sh-word-count/tests/test.sh").read_text().split("\n", 1)[1])
    ran = run_endstate("tasks", "import", "harbor", str(task), "--out", str(tmp_path / "out"), "--base", DEFAULT_IMAGE)
    assert ran.returncode == 0 and "installs" not in ran.stdout, ran.stdout + ran.stderr
    ran = run_endstate("eval", "--suite", str(tmp_path / "out"), "--model", "scripted/reference", "--out",
                       str(tmp_path / "run"))
    from endstate.run import read_results

    (result,) = read_results(tmp_path / "run").tasks
    assert result.outcome == "fail" and result.failing_grader == "verifier", ran.stdout + ran.stderr
    assert "exited 100" in result.reason and "apt package bats is not in the task's image" in result.reason, result.reason


@pytest.mark.docker
def test_a_verifier_that_fetches_uv_and_runs_pytest_through_uvx_grades_offline(tmp_path):
    """tests/data/harbor-uv: a test.sh as many Harbor tasks have it (apt-get install curl, uv's
    installer piped to sh, `uvx -p 3.13 -w pytest==8.4.1 ... pytest`). The import puts curl,
    uv and the wheels in the image; the verifier then runs real pytest under uvx, offline."""
    build_image(DEFAULT_IMAGE)
    ran = run_endstate("tasks", "import", "harbor", str(DATA.parent / "harbor-uv"), "--out", str(tmp_path / "suite"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "task sh-greeting: tests/test.sh installs curl: added to its image" in ran.stdout
    assert "task sh-greeting: tests/test.sh asks uv for Python 3.13: its verifier runs on the image's 3.11" in ran.stdout
    wheels = sorted(p.name.split("-")[0] for p in (tmp_path / "suite/sh-greeting/image/.endstate-verifier/wheels").iterdir())
    assert {"uv", "pytest", "pytest_json_ctrf"} <= set(wheels), wheels
    from endstate.run import read_results

    for arm, outcome, says in (("reference", "pass", "exit 0, reward 1"), ("null", "fail", "1 failed")):
        run_endstate("eval", "--suite", str(tmp_path / "suite"), "--model", f"scripted/{arm}", "--out",
                     str(tmp_path / arm))
        (result,) = read_results(tmp_path / arm).tasks
        verdict = next(v for v in result.verdicts if v.grader == "verifier")
        assert (verdict.outcome, says in verdict.reason) == (outcome, True), verdict.reason


def test_the_folders_an_oracle_changed_outside_its_working_folder_are_sealed():
    from endstate.authoring._harbor import _sealed_paths

    diff = ("C /etc\nC /etc/nginx\nA /etc/nginx/site.conf\nD /etc/nginx/default\nC /app\nA /app/out.txt\n"
            "C /var\nC /var/log\nA /var/log/nginx.log\nC /root\nA /root/.bash_history\nA /usr/local/bin/tool\n"
            "C /tmp\nA /tmp/scratch\n")
    assert _sealed_paths(diff, "/app") == ["/etc/nginx", "/usr/local/bin"]
    assert _sealed_paths("C /app\nA /app/x\n", "/app") == []


def test_a_seal_path_that_is_not_absolute_is_refused_naming_the_file(tmp_path):
    shutil.copytree(Path(__file__).resolve().parents[2] / "tasks-harbor" / "etc-greeter-config", tmp_path / "t")
    manifest = tmp_path / "t/task.toml"
    manifest.write_text(manifest.read_text().replace('paths = ["/etc/greeter"]', 'paths = ["etc/greeter"]'))
    from endstate.errors import ManifestError
    from endstate.task import load_task

    with pytest.raises(ManifestError) as raised:
        load_task(tmp_path / "t")
    assert str(raised.value).startswith(f"{manifest}: `seal` path 'etc/greeter' is not absolute: name it from / "
                                        "(e.g. /etc/nginx)"), raised.value
