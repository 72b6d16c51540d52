"""What a project declares it needs, read from its files; the image folder a task gets for it."""

from __future__ import annotations

from endstate.sandbox._tree import FileEntry, Tree
from endstate.suite._taskimage import declared_requirements, write_task_image


def files(mapping: dict[str, str]) -> Tree:
    return {path: FileEntry(0o644, text.encode()) for path, text in mapping.items()}


def test_pyproject_dependencies_and_test_extras():
    project = files({"pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["attrs>=20"]\n'
                                       '[project.optional-dependencies]\ntest = ["pytest", "hypothesis", "pkg[x]"]\n'
                                       'docs = ["sphinx-theme"]\n[dependency-groups]\ntests = ["freezegun"]\n'})
    assert declared_requirements(project) == ["attrs>=20", "freezegun", "hypothesis"]


def test_setup_cfg_setup_py_and_the_requirements_files_they_name():
    project = files({
        "setup.cfg": "[metadata]\nname = pkg\n[options]\ninstall_requires =\n    six\n"
                     "[options.extras_require]\ntesting =\n    mock\n",
        "setup.py": "REQUIRES = ['chardet']\nsetup(install_requires=REQUIRES, tests_require=['nose'])\n"
                    "open('requirements.txt')\n",
        "requirements.txt": "# runtime\nidna>=2 # why\n-r requirements-extra.txt\n",
        "requirements-extra.txt": "certifi\n",
        "tox.ini": "[testenv]\ndeps =\n    pytest-cov\n    -r{toxinidir}/requirements.txt\n    toml\n",
    })
    assert declared_requirements(project) == ["certifi", "chardet", "idna>=2", "mock", "nose", "six", "toml"]
    # Tooling no test imports is left out, unless the configuration's addopts needs it.
    assert "pytest-cov" in declared_requirements(project, keep=["pytest-cov"])


def test_the_image_folder(tmp_path):
    assert write_task_image(tmp_path, "six==1.17.0 --hash=sha256:00\n") == "image/Dockerfile"
    dockerfile = (tmp_path / "image/Dockerfile").read_text()
    assert dockerfile.count("FROM endstate-sandbox:2") == 1 and "--no-index" in dockerfile
    assert "--require-hashes" in dockerfile
    assert (tmp_path / "image/requirements.txt").read_text() == "six==1.17.0 --hash=sha256:00\n"
