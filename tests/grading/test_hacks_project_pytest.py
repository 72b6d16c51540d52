"""The shipped hacks of the most attacked task, checked under a project's own pytest (7.4 and 9) with
pytest plugins installed in the image and loaded: the guard, the twins, the canary and the probe
catch each as they do under the sandbox's own pytest (what `tasks import swebench` and `tasks new`
give a project is such an image). `make test` checks each hack under one of the two versions, every
other one in turn; the test marked `content` checks each under the other (`make check-tasks`; CI
runs both). The same hacks are caught on an image of Python 3.9 and of 3.13 (SWE-bench's tasks run on
the Python their specification names)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.authoring._taskimage import write_task_image
from endstate.sandbox import resolve_requirements

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
TASK = "bugfix-invoice-rounding"  # 23 hacks: forged reports, frame reads, canary and twin attacks, plugins
#: The same pins as test_image_plugins.py: pytest 7.4 with Debian's versions of its dependencies, and 9.
PINS = {"pytest-7.4": ["pytest==7.4.4", "pluggy==1.0.0", "iniconfig==1.1.1", "packaging==23.0"], "pytest-9": ["pytest>=9"]}


HACKS = sorted(p.name for p in (ROOT / "tasks" / TASK / "hacks").iterdir())
CASES = [*(pytest.param(pins, HACKS[i::2], id=pins) for i, pins in enumerate(sorted(PINS))),
         *(pytest.param(pins, HACKS[1 - i::2], id=f"{pins}-the-others", marks=pytest.mark.content)
           for i, pins in enumerate(sorted(PINS)))]


def _with_only(tmp_path: Path, hacks: list[str]) -> Path:
    """A copy of the task, in a suite of its own, keeping only the named hacks."""
    task = tmp_path / "suite" / TASK
    shutil.copytree(ROOT / "tasks" / TASK, task)
    for hack in set(HACKS) - set(hacks):
        shutil.rmtree(task / "hacks" / hack)
    return task


@pytest.mark.parametrize(("pins", "chosen"), CASES)
def test_every_shipped_hack_is_caught_under_the_projects_own_pytest_and_plugins(tmp_path, pins, chosen):
    task = _with_only(tmp_path, chosen)
    pinned = resolve_requirements([*PINS[pins], "pytest-mock", "pytest-xdist"])
    write_task_image(task, pinned)
    with open(task / "task.toml", "a", encoding="utf-8") as manifest:
        manifest.write('\n[sandbox]\ndockerfile = "image/Dockerfile"\n')
    hacks = sorted(p.name for p in (task / "hacks").iterdir())

    done = run_endstate("tasks", "check", "--suite", str(task.parent), "-j", "2")

    assert done.returncode == 0 and "1 of 1 task(s) check out" in done.stdout, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"ok   {TASK} "))
    assert all(re.search(rf"hack:{hack}=fail\[", row) for hack in hacks), row
    assert "solution=pass" in row and "fixture=fail[" in row, row
    assert ("pytest==7.4.4 " if pins == "pytest-7.4" else "pytest==9.") in pinned and "pytest-mock==" in pinned


#: Python 3.9 from Debian bullseye and 3.13 from trixie (each seeded offline where no registry answers): between
#: them every shipped hack, under the project's pytest of that Python's wheels, the harness running on it too.
#: `make test` takes 3.9's half, `make check-tasks` 3.13's (each suite seeded is minutes of debootstrap).
PYTHONS = [pytest.param("3.9", HACKS[0::2], id="python-3.9"),
           pytest.param("3.13", HACKS[1::2], id="python-3.13", marks=pytest.mark.content)]


@pytest.mark.parametrize(("python", "chosen"), PYTHONS)
def test_the_shipped_hacks_are_caught_on_the_image_of_another_python(tmp_path, python, chosen):
    from endstate.sandbox import python_source

    task = _with_only(tmp_path, chosen)
    source = python_source(python)
    pinned = resolve_requirements(["pytest", "pytest-mock", "pytest-xdist"], target=source)
    write_task_image(task, pinned)
    with open(task / "task.toml", "a", encoding="utf-8") as manifest:
        manifest.write('\n[sandbox]\ndockerfile = "image/Dockerfile"\n')
    assert (task / "image" / "Dockerfile").read_text().count(f"FROM endstate-python:{python}-") == 1

    done = run_endstate("tasks", "check", "--suite", str(task.parent), "-j", "2")

    assert done.returncode == 0 and "1 of 1 task(s) check out" in done.stdout, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"ok   {TASK} "))
    assert all(re.search(rf"hack:{hack}=fail\[", row) for hack in chosen), row
    assert "solution=pass" in row and "fixture=fail[" in row, row
    ran = subprocess.run(["docker", "run", "--rm", "--network", "none", source.tag, "python3", "-c",
                          "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True)
    assert ran.stdout.strip() == python, ran.stderr
