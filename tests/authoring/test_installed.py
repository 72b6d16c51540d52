"""The project as its task's image holds it installed: metadata and generated version files, read statically."""

from __future__ import annotations

import email
import importlib.machinery
import json
import subprocess
import sys
from pathlib import Path

from endstate.authoring._installed import (
    asks_for_metadata,
    generated_files,
    namespace_lines,
    project_metadata,
    project_version,
)
from endstate.sandbox._tree import FileEntry, Tree


def files(mapping: dict[str, str]) -> Tree:
    return {path: FileEntry(0o644, text.encode()) for path, text in mapping.items()}


def text(tree: Tree, path: str) -> str:
    return tree[path].data.decode()


def test_the_version_the_configuration_states_or_the_fallback():
    assert project_version(files({"pyproject.toml": '[project]\nname = "a"\nversion = "1.4.2"\n'})) == "1.4.2"
    cfg = files({"setup.cfg": "[metadata]\nname = b\nversion = attr: b.__version__\n",
                 "src/b/__init__.py": '"""B."""\n__version__ = "3.0.1"\n'})
    assert project_version(cfg) == "3.0.1"
    assert project_version(files({"setup.py": "from setuptools import setup\nsetup(name='c', version='0.9')\n"})) == "0.9"
    assert project_version(files({"setup.py": "setup(name='d')\n", "d/_version.py": "__version__ = '2.2b1'\n"})) == "2.2b1"
    scm = files({"pyproject.toml": '[project]\nname = "e"\ndynamic = ["version"]\n'})
    assert project_version(scm, fallback="3.12") == "3.12" and project_version(scm) == "0.0.0"


def test_the_metadata_of_an_editable_install_with_its_entry_points_but_no_pytest_plugin():
    project = files({"pyproject.toml": '[project]\nname = "Fancy.Lib"\nversion = "1.0"\n[project.scripts]\nfancy = "f:main"\n'
                                       '[project.entry-points.fancy_plugins]\ncore = "f.core"\n'
                                       '[project.entry-points.pytest11]\nfancy = "f.plugin"\n'})
    made = project_metadata(project, "1.0")
    folder = "Fancy_Lib-1.0.dist-info"
    assert sorted(made) == [f"{folder}/{leaf}" for leaf in
                            ("INSTALLER", "METADATA", "RECORD", "direct_url.json", "entry_points.txt")]
    meta = email.message_from_string(text(made, f"{folder}/METADATA"))
    assert (meta["Name"], meta["Version"]) == ("Fancy.Lib", "1.0")
    points = text(made, f"{folder}/entry_points.txt")
    assert "[console_scripts]\nfancy = f:main\n" in points and "[fancy_plugins]\ncore = f.core\n" in points
    assert "pytest11" not in points  # a plugin of the tree is never loaded
    assert json.loads(text(made, f"{folder}/direct_url.json"))["dir_info"] == {"editable": True}
    assert project_metadata(files({"setup.py": "setup()\n"}), "1.0") == {}


def test_version_files_the_build_backend_writes_join_the_fixture_where_it_lacks_them():
    scm = files({"pyproject.toml": '[tool.setuptools_scm]\nversion_file = "src/f/_version.py"\n'})
    written = text(generated_files(scm, "3.12.2"), "src/f/_version.py")
    namespace: dict = {}
    exec(written, namespace)
    assert namespace["version"] == "3.12.2" and namespace["version_tuple"] == (3, 12, 2)
    hatch = files({"pyproject.toml": '[tool.hatch.build.hooks.vcs]\nversion-file = "src/g/version.py"\n'
                                     'template = "v = {version!r}\\n"\n'})
    assert text(generated_files(hatch, "1.2"), "src/g/version.py") == "v = '1.2'\n"
    setup = files({"setup.py": "setup(use_scm_version={'write_to': 'h/_v.txt'})\n"})
    assert text(generated_files(setup, "4.0"), "h/_v.txt") == "4.0\n"
    kept = {**scm, "src/f/_version.py": FileEntry(0o644, b"version = 'mine'\n")}
    assert generated_files(kept, "3.12.2") == {}


def test_code_that_reads_installed_metadata():
    assert asks_for_metadata(files({"f/__init__.py": "from importlib.metadata import version\n"}))
    assert asks_for_metadata(files({"f/__init__.py": "import pkg_resources\n"}))
    assert not asks_for_metadata(files({"f/__init__.py": "import os\n"}))


def test_a_declared_namespace_is_made_as_an_editable_install_makes_it_without_running_its_init(tmp_path):
    """matplotlib's `mpl_toolkits/__init__.py` imports pkg_resources, whose DeprecationWarning fails every test
    module under `filterwarnings = error`; its editable install never runs that file, and neither does the image.
    The namespace is found where the import looks (a graded run's scratch copy), never in a folder fixed at build."""
    project = files({"setup.py": "from setuptools import setup\nsetup(name='mpl', package_dir={'': 'lib'},\n"
                                 "      namespace_packages=['kits', 'deep.er'])\n"})
    made = project_metadata(project, "3.6.0")
    pth = "__editable__.mpl-3.6.0-nspkg.pth"
    assert pth in made and f"{pth},," in text(made, "mpl-3.6.0.dist-info/RECORD")
    site = tmp_path / "site"
    site.mkdir()
    (site / pth).write_bytes(made[pth].data)
    copies = [tmp_path / "workspace", tmp_path / "scratch"]
    for root in copies:
        for package in ("kits", "deep", "deep/er"):
            (root / "lib" / package).mkdir(parents=True)
            (root / "lib" / package / "__init__.py").write_text("raise RuntimeError('ran')\n")
        (root / "lib/kits/tool.py").write_text("NAME = 'tool'\n")
        (root / "lib/deep/er/leaf.py").write_text("NAME = 'leaf'\n")

    def run(lib: Path) -> tuple[int, str, str]:
        probe = (f"import site, sys; site.addsitedir({str(site)!r}); sys.path.insert(0, {str(lib)!r}); "
                 "import kits.tool, deep.er.leaf; print(kits.tool.NAME, deep.er.leaf.NAME, kits.tool.__file__)")
        ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
        return ran.returncode, ran.stdout, ran.stderr

    scratch = copies[1] / "lib"
    assert run(scratch) == (0, f"tool leaf {scratch / 'kits' / 'tool.py'}\n", "")
    # nothing on the path (the image's own build): nothing made, nothing said
    assert run(tmp_path / "absent")[2].strip().endswith("ModuleNotFoundError: No module named 'kits'")
    # an extension module where the namespace's __init__ was: making its module would run it; left to the import
    (scratch / "kits/__init__.py").unlink()
    (scratch / "kits" / f"__init__{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"not an ELF")
    code, _, err = run(scratch)
    assert code == 1 and "ImportError" in err and "Error processing line" not in err, err
    # setup.cfg's spelling; nothing declared, nothing written
    cfg = files({"setup.cfg": "[metadata]\nname = n\n[options]\npackage_dir =\n    =src\nnamespace_packages = ns\n"})
    assert "frozenset(['ns'])" in namespace_lines(cfg)
    assert namespace_lines(files({"setup.py": "setup(name='plain')\n"})) == ""
