"""The guard and the plugins an image installs (no Docker: the harness's entry point on the host, over a
Python whose site-packages play the image's): a plugin's own hook replacing a runner module's attribute
where the project's configuration enables it is the project's (pytest-doctestplus and
`doctest.OutputChecker`, astropy's), and the same plugin or replacement brought in by the end state is not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from importlib import resources
from pathlib import Path

import pytest

HARNESS = resources.files("endstate.grading").joinpath("harness")
#: pytest and what it imports, as they are installed here.
PYTEST = ("_pytest", "pytest", "pytest-*.dist-info", "pluggy", "pluggy-*.dist-info", "iniconfig", "iniconfig-*.dist-info",
          "packaging", "packaging-*.dist-info", "py.py", "pygments", "pygments-*.dist-info")

#: A plugin of the image, as pytest-doctestplus is: enabled by an ini key, it swaps doctest's checker.
PLUS = '''import doctest


class Checker(doctest.OutputChecker):
    pass


def pytest_addoption(parser):
    parser.addini("fake_plus", "use the tolerant checker", default="")


def pytest_configure(config):
    if config.getini("fake_plus"):
        doctest.OutputChecker = Checker
'''
#: A module of the image that is a plugin only when something names it: it swaps the checker always.
OTHER = "import doctest\n\n\ndef pytest_configure(config):\n    doctest.OutputChecker = type('Lenient', (doctest.OutputChecker,), {})\n"
CHECKS = "import doctest\n\n\ndef test_checker():\n    assert doctest.OutputChecker.__name__ == {name!r}\n"


#: A plugin of the image whose module imports the project under test, as pytest-astropy-header 0.1 imports astropy.
HEADER = "import proj\n\n\ndef pytest_report_header(config):\n    return 'proj ' + proj.VERSION\n"
SEES_HEADER = ("def test_header(pytestconfig):\n    assert pytestconfig.pluginmanager.get_plugin('projheader') is not None\n"
               "    assert 'projheader' in {dist.project_name for _, dist in pytestconfig.pluginmanager.list_plugin_distinfo()}\n")


def _image_python(tmp_path: Path, plugins: dict[str, str] | None = None) -> Path:
    """A Python whose own site-packages hold pytest (this one's, linked) and the image's plugins
    (`plugins`: entry point name -> module source, each a distribution of its own, beside fakeplus)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "image")], check=True)
    python = tmp_path / "image" / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    outer = Path(sysconfig.get_path("purelib"))
    for name in PYTEST:
        for found in outer.glob(name):
            (site / found.name).symlink_to(found)
    (site / "fakeplus").mkdir()
    (site / "fakeplus" / "__init__.py").write_text("")
    (site / "fakeplus" / "plugin.py").write_text(PLUS)
    (site / "otherplug.py").write_text(OTHER)
    info = site / "fakeplus-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplus\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nfakeplus = fakeplus.plugin\n")
    for name, source in (plugins or {}).items():
        (site / f"{name}.py").write_text(source)
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[pytest11]\n{name} = {name}\n")
    return python


def _guarded_run(tmp_path: Path, python: Path, files: dict[str, str], changed: list[str]) -> tuple[int, list[str]]:
    """Run the workspace's tests as the harness does, with the guard; (exit status, its findings)."""
    run = _run(tmp_path, python, files, changed)
    guard = tmp_path / "reports" / "n1" / "guard.json"
    assert guard.exists(), run.stdout[-2000:] + run.stderr[-2000:]
    return run.returncode, json.loads(guard.read_text())["findings"]


def _run(tmp_path: Path, python: Path, files: dict[str, str], changed: list[str]) -> subprocess.CompletedProcess:
    harness, workspace, reports = tmp_path / "harness", tmp_path / "ws", tmp_path / "reports"
    for folder in (harness, workspace, reports):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
    for name in ("endstate_runner.py", "endstate_guard.py"):
        (harness / name).write_bytes(HARNESS.joinpath(name).read_bytes())
    (harness / "changed.json").write_text(json.dumps(changed))
    for path, text in files.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    return subprocess.run([python, "-s", "-B", str(harness / "endstate_runner.py"), "pytest", str(reports), "n1",
                           "guard", str(workspace), "", "--", "-q", "tests"],
                          cwd=workspace, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def image_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _image_python(tmp_path_factory.mktemp("python"))


def test_an_image_plugins_replacement_the_projects_configuration_enables_is_the_projects(tmp_path, image_python):
    files = {"pytest.ini": "[pytest]\nfake_plus = enabled\n", "tests/test_doc.py": CHECKS.format(name="Checker")}
    assert _guarded_run(tmp_path, image_python, files, changed=[]) == (0, [])
    # Not enabled, nothing is replaced: the plugin itself is no finding either.
    files = {"pytest.ini": "[pytest]\n", "tests/test_doc.py": CHECKS.format(name="OutputChecker")}
    assert _guarded_run(tmp_path, image_python, files, changed=[]) == (0, [])


def test_an_image_plugin_the_end_state_enables_is_caught_with_its_replacement(tmp_path, image_python):
    files = {"pytest.ini": "[pytest]\n", "tests/test_doc.py": "pytest_plugins = ['otherplug']\n\n\n"
                                                              + CHECKS.format(name="Lenient")}
    code, findings = _guarded_run(tmp_path, image_python, files, changed=["tests/test_doc.py"])
    assert code == 0 and "doctest.OutputChecker was replaced" in findings
    assert any("not on the harness's allow-list" in f and "otherplug" in f for f in findings), findings
    # The same test module as the fixture's own: the plugin it names is the project's.
    assert _guarded_run(tmp_path, image_python, files, changed=[]) == (0, [])


def test_an_image_plugins_class_put_in_place_by_the_end_states_code_is_caught(tmp_path, image_python):
    # The very class the plugin would put there, where the project's configuration does not enable it.
    files = {"pytest.ini": "[pytest]\n", "calc.py": "import doctest\nimport fakeplus.plugin\n\n"
                                                   "doctest.OutputChecker = fakeplus.plugin.Checker\n",
             "tests/test_doc.py": "import calc\n\n\n" + CHECKS.format(name="Checker")}
    code, findings = _guarded_run(tmp_path, image_python, files, changed=["calc.py"])
    assert code == 0 and "doctest.OutputChecker was replaced" in findings, findings
    # Called through the plugin's own hook function, from the end state's code: the same.
    files["calc.py"] = ("import fakeplus.plugin\n\n\nclass Config:\n    def getini(self, name):\n        return 'yes'\n\n\n"
                        "fakeplus.plugin.pytest_configure(Config())\n")
    code, findings = _guarded_run(tmp_path, image_python, files, changed=["calc.py"])
    assert code == 0 and "doctest.OutputChecker was replaced" in findings, findings


def test_an_image_plugin_that_imports_the_project_loads_once_the_workspace_is_on_sys_path(tmp_path):
    python = _image_python(tmp_path / "python", {"projheader": HEADER})
    files = {"pytest.ini": "[pytest]\n", "proj/__init__.py": "VERSION = '1.3'\n", "tests/test_header.py": SEES_HEADER}
    assert _guarded_run(tmp_path, python, files, changed=[]) == (0, [])
    # `-p no:NAME` keeps it out, unloaded: the project is never imported for it.
    files["pytest.ini"] = "[pytest]\naddopts = -p no:projheader\n"
    files["proj/__init__.py"] = "raise SystemExit('the project was imported for a blocked plugin')\n"
    files["tests/test_header.py"] = "def test_blocked(pytestconfig):\n    assert not pytestconfig.pluginmanager.has_plugin('projheader')\n"
    assert _guarded_run(tmp_path, python, files, changed=[]) == (0, [])
    # The project broken by the end state: the run fails with pytest's own error for it, and writes no report.
    files = {"pytest.ini": "[pytest]\n", "proj/__init__.py": "raise ImportError('broken by the end state')\n",
             "tests/test_header.py": SEES_HEADER}
    run = _run(tmp_path, python, files, changed=["proj/__init__.py"])
    assert run.returncode != 0 and "broken by the end state" in run.stderr, run.stderr[-2000:]
    assert not (tmp_path / "reports" / "n1" / "report.xml").exists()
    # A module of the plugin's name in the workspace, found first once it joins sys.path: never loaded as the
    # image's plugin (it would be trusted as one), the run fails instead.
    files = {"pytest.ini": "[pytest]\n", "proj/__init__.py": "VERSION = '1.3'\n", "tests/test_header.py": SEES_HEADER,
             "projheader.py": "def pytest_report_header(config):\n    return 'not the image'\n"}
    run = _run(tmp_path, python, files, changed=["projheader.py"])
    assert run.returncode != 0 and "was shadowed by a module of the workspace" in run.stderr, run.stderr[-2000:]
    assert not (tmp_path / "reports" / "n1" / "report.xml").exists()


def test_an_image_plugin_that_needs_a_module_nowhere_fails_the_run_before_any_of_the_workspace_is_imported(tmp_path):
    python = _image_python(tmp_path / "python", {"needsgone": "import gone_from_everywhere\n"})
    files = {"pytest.ini": "[pytest]\n", "conftest.py": "raise SystemExit('the workspace was imported')\n",
             "tests/test_x.py": "def test_x():\n    pass\n"}
    run = _run(tmp_path, python, files, changed=[])
    assert run.returncode != 0 and "No module named 'gone_from_everywhere'" in run.stderr, run.stderr[-2000:]
    assert "the workspace was imported" not in run.stdout + run.stderr
