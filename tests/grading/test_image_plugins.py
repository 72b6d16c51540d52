"""A graded pytest run under the task image's own pytest (7.4 and 9): the plugins the image installs
load as pytest would load them (blocked by `-p no:NAME`), one the tree brings never does, the
guard finds nothing in an honest run, and HOME takes the files a suite writes there."""

from __future__ import annotations

import pytest

from endstate.authoring._taskimage import write_task_image
from endstate.grading import prepare_grading_sandbox, seal_overlay, stage_holdout
from endstate.grading._testrun import run_tests, start_warm_runner
from endstate.sandbox import SandboxLimits, build_task_image, resolve_requirements
from endstate.sandbox._tree import FileEntry

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TESTS = b'''import os


def test_plugins(pytestconfig, mocker):
    manager = pytestconfig.pluginmanager
    assert mocker.Mock(return_value=3)() == 3
    assert manager.get_plugin("xdist") is None  # the project's own configuration blocks it
    assert manager.get_plugin("planted") is None
    assert "pytest-mock" in {dist.project_name for _, dist in manager.list_plugin_distinfo()}


def test_home():
    os.makedirs(os.path.expanduser("~/.cache/suite"), exist_ok=True)
    with open(os.path.expanduser("~/.cache/suite/seen"), "w") as seen:
        seen.write("yes")
'''
#: What the agent could leave in the tree: a distribution whose pytest plugin fails every test.
PLANTED = {
    "planted-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: planted\nVersion: 1.0\n",
    "planted-1.0.dist-info/entry_points.txt": b"[pytest11]\nplanted = planted_plugin\n",
    "planted_plugin.py": b"def pytest_runtest_call(item):\n    raise SystemExit('the planted plugin ran')\n",
}


#: pytest 7.4 with the very versions of its dependencies the sandbox's own pytest came with (Debian's):
#: the image must install them anyway, since it removes the sandbox's.
PINS = {"pytest-7.4": ["pytest==7.4.4", "pluggy==1.0.0", "iniconfig==1.1.1", "packaging==23.0"], "pytest-9": ["pytest>=9"]}


@pytest.fixture(scope="module", params=sorted(PINS))
def image(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("image")
    write_task_image(folder, resolve_requirements([*PINS[request.param], "pytest-mock", "pytest-xdist"]))
    return build_task_image(folder / "image" / "Dockerfile", "plugins-" + request.param)


def test_the_images_plugins_load_and_the_trees_do_not(image):
    tree = {path: FileEntry(0o644, data) for path, data in
            {"tests/test_env.py": TESTS, "pytest.ini": b"[pytest]\naddopts = -p no:xdist\n", **PLANTED}.items()}
    with prepare_grading_sandbox("docker", image, SandboxLimits(command_timeout_s=60), "plugins") as box:
        grading = seal_overlay(tree, tree, box)
        stage_holdout(grading, {})
        cold = run_tests(grading, "python -m pytest -q tests")
        start_warm_runner(grading)
        warm = run_tests(grading, "python -m pytest -q tests")
    for run in (cold, warm):
        assert (run.tests, run.failures, run.errors, run.canary, run.findings) == (2, 0, 0, "failed", []), run.output_tail
