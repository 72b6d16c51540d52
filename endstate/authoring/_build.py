"""A compiled project built as its own install builds it: C, C++ and Cython extensions in place.

matplotlib, scikit-learn and astropy cannot be imported from their source tree: their install
compiles extension modules next to the sources (`pip install -e .` runs `build_ext --inplace`).
endstate builds them once, when the task is made, before any agent runs:

- the task's image gets the compilers and headers from Debian (`BUILD_PACKAGES`, and the Debian
  packages SWE-bench's pre-install steps name: `SwebenchEnv.apt`) and the build's own
  dependencies from PyPI (`build_requirements`: `[build-system] requires`, `setup_requires`), as
  pinned wheels beside the project's test dependencies;
- `build_products` runs the build in a container of that image, as root, with no network, over a
  copy of the fixture with SWE-bench's pre-install edits applied (`pre_install_tree`), and returns
  what it wrote next to the sources (the `.so` files, the C it generated from `.pyx`);
- those files join the fixture: the agent's workspace starts from them, the seal hashes them as
  the fixture's, and a change to one is a change of the end state like any other file's.

matplotlib's build is pointed at Debian's freetype and qhull (its options in the file `MPLSETUPCFG` names,
which every release since 3.1 reads), since it would otherwise download their sources. The compilers run through Debian's ccache, its folder kept on the
host per project (`compiled_objects_root`): the next instance of that project compiles only what
differs, in whichever of its images (ccache's key is the preprocessed source with every header it
includes, the compiler and its flags, so an object taken from it is the one the compiler would make). An edit to a `.pyx` or `.c` file takes effect only when the
agent rebuilds (the compilers stay in the image; `python setup.py build_ext --inplace`): the
grading never runs the end state's build.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Callable, Collection
from pathlib import Path

from endstate.authoring._installed import _setup_keywords
from endstate.authoring._swebenchenv import SwebenchEnv
from endstate.authoring._versions import requirement_name
from endstate.errors import UserError
from endstate.sandbox import FileEntry, SandboxLimits, Tree, image_id, open_sandbox, without_caches

__all__ = ["BUILD_PACKAGES", "needs_build", "build_requirements", "pre_install_tree", "build_products",
           "system_build_packages", "built_fixture_products", "build_inputs", "compiled_sources",
           "compiled_objects_root", "objects_folder"]

#: Debian packages every build of an extension module needs: compilers, Python's headers, pkg-config, and
#: ccache, which keeps what they compiled for the next build in that image.
BUILD_PACKAGES = ("ccache", "g++", "gcc", "libc6-dev", "pkg-config", "python3-dev")
#: Build requirements that stand for another (`oldest-supported-numpy` is numpy, built against the pinned one).
_STANDS_FOR = {"oldest-supported-numpy": "numpy"}
#: The files SWE-bench's pre-install `sed` steps edit: the ones the project's install reads.
_SETUP_FILES = ("setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "requirements.txt")
#: Where a build leaves what no import needs: its scratch folders and its egg-info.
_SCRATCH = re.compile(r"^(build|dist|\.eggs|\.endstate-ccache|\.endstate-tmp)/|(^|/)[^/]+\.egg-info/|(^|/)mplsetup\.cfg$")
#: ccache's folder in the build's workspace, carried in from the host and back.
_CCACHE = ".endstate-ccache"
#: The build's temporary folder, in its workspace: the sandbox's /tmp is mounted noexec, and a build may run
#: a program it compiled there (scikit-learn's setup.py compiles and runs a test of OpenMP in `mkdtemp()`).
_BUILD_TMP = ".endstate-tmp"
#: Debian's ccache: its folder of compiler names first on PATH, the compilers' own command lines unchanged.
_WITH_CCACHE = (f"if [ -d /usr/lib/ccache ]; then export PATH=/usr/lib/ccache:$PATH CCACHE_DIR=$PWD/{_CCACHE} "
                "CCACHE_MAXSIZE=1G CCACHE_COMPRESS=1; ccache -z >/dev/null; fi; ")
#: ccache's counts of the build's compilations, printed after a build that succeeded.
_CCACHE_COUNTS = ("ccache --print-stats 2>/dev/null | grep -E '^(direct_cache_hit|preprocessed_cache_hit|"
                  "cache_miss)\\s'")
#: matplotlib's build downloads freetype and qhull unless told to take the system's.
_MPLSETUP = b"[libs]\nsystem_freetype = True\nsystem_qhull = True\n"
#: Debian's freetype and qhull, for matplotlib's build.
MATPLOTLIB_PACKAGES = ("libfreetype6-dev", "libqhull-dev")
BUILD_TIMEOUT_S = 3600.0


def _text(project: Tree, path: str) -> str:
    entry = project.get(path)
    return entry.data.decode("utf-8", errors="replace") if entry is not None and not entry.link else ""


def needs_build(project: Tree) -> bool:
    """Whether the project compiles extension modules: a C, C++ or Cython source beside a setup.py
    that builds extensions, or a build backend that compiles."""
    sources = any(p.endswith((".pyx", ".c", ".cpp")) and not p.startswith(("doc", "test", "example", "bench"))
                  for p in project)
    # setup.py, or a package's own (numpy.distutils' `config.add_extension`: scikit-learn before 1.1).
    setups = "".join(_text(project, p) for p in project if p == "setup.py" or p.endswith("/setup.py"))
    # astropy before 4.0 builds through astropy_helpers (`get_package_info`, or its `setup` itself).
    if sources and re.search(r"ext_modules|\bExtension\(|cythonize|get_extensions|add_extension|astropy_helpers",
                             setups):
        return True
    requires = {requirement_name(r) for r in _build_system(project)}
    return sources and bool(requires & {"cython", "numpy", "oldest-supported-numpy", "extension-helpers",
                                        "pybind11", "meson-python", "scikit-build-core"})


def _build_system(project: Tree) -> list[str]:
    try:
        table = tomllib.loads(_text(project, "pyproject.toml") or "").get("build-system", {})
    except tomllib.TOMLDecodeError:
        return []
    return [str(r) for r in table.get("requires", [])] if isinstance(table, dict) else []


def build_requirements(project: Tree, log: Callable[[str], None] = lambda line: None) -> list[str]:
    """What the project's build imports, as requirements: `[build-system] requires` and setup.py's or
    setup.cfg's `setup_requires` (a stand-in replaced: `oldest-supported-numpy` by numpy). A release pinned
    exactly is taken as its series' newest (`cython==0.29.22` as `cython~=0.29.22`): a later patch release
    is what supports a newer Python (0.29.22's C includes `longintrepr.h`, which Python 3.11 moved)."""
    found = _build_system(project)
    declared = _setup_keywords(project).get("setup_requires")
    found += [str(r) for r in declared] if isinstance(declared, (list, tuple)) else []
    cfg = re.search(r"^setup_requires\s*=\s*\n((?:[ \t]+\S.*\n?)+)", _text(project, "setup.cfg"), flags=re.MULTILINE)
    found += [line.strip() for line in cfg.group(1).splitlines() if line.strip()] if cfg else []
    wanted = []
    for requirement in found:
        name = requirement_name(requirement)
        exact = re.fullmatch(r"([^=<>!~;\s]+)\s*==\s*(\d+\.\d+(?:\.\d+)*)\s*", requirement)
        if exact:
            log(f"the build requires {requirement.strip()}: taken as {exact.group(1)}~={exact.group(2)}, the newest "
                "patch release of that series")
            requirement = f"{exact.group(1)}~={exact.group(2)}"
        wanted.append(_STANDS_FOR.get(name, requirement.strip()))
    return list(dict.fromkeys(w for w in wanted if w))


def pre_install_tree(project: Tree, steps: Collection[str], log: Callable[[str], None] = lambda line: None) -> Tree:
    """The project's setup files as SWE-bench's pre-install shell steps leave them (`sed -i ... setup.py`):
    the steps run on a scratch copy of those files on the host (they are endstate's own data, never the
    project's); a step that fails is said and skipped, as SWE-bench's shell goes on."""
    if not steps:
        return project
    edited = dict(project)
    with tempfile.TemporaryDirectory(prefix="endstate-preinstall-") as tmp:
        for name in _SETUP_FILES:
            if name in project and not project[name].link:
                (Path(tmp) / name).write_bytes(project[name].data)
        for step in steps:
            done = subprocess.run(["bash", "-c", step], cwd=tmp, capture_output=True, text=True, timeout=60)
            if done.returncode:
                log(f"SWE-bench's pre-install step {step!r} failed here: {done.stderr.strip()[:200]}")
        for name in _SETUP_FILES:
            path = Path(tmp) / name
            if path.is_file() and name in project and path.read_bytes() != project[name].data:
                edited[name] = FileEntry(project[name].mode, path.read_bytes())
                log(f"SWE-bench's pre-install steps edit {name} (read for the image and its build; the fixture "
                    "keeps the project's own)")
    return edited


#: Sources a build compiles: a change to one takes effect only through a new build.
_COMPILED_SOURCES = (".pyx", ".pxd", ".pxi", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp")


def compiled_sources(paths: Collection[str]) -> list[str]:
    """The paths among `paths` that a build compiles (a fix's: its change would need the build again)."""
    return sorted(p for p in paths if p.endswith(_COMPILED_SOURCES))


def _command(project: Tree) -> str:
    """The build step of the project's editable install, offline against the image's packages."""
    if "setup.py" in project:
        return "python3 setup.py build_ext --inplace"
    return "python3 -m pip install --no-build-isolation --no-deps --no-index --no-cache-dir -e ."


def compiled_objects_root() -> Path:
    """Where ccache's folder of each project is kept between builds (`objects_folder`)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "endstate" / "compiled"


def objects_folder(task_id: str) -> str:
    """The name ccache's folder is kept under for a task: its project's, for SWE-bench's ids
    (`astropy__astropy-12907`: `astropy__astropy`), so the instances of one project share it."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", re.sub(r"-\d+$", "", task_id))[:100] or "task"


def _kept_objects(home: Path) -> Tree:
    """ccache's folder as the last build in this image left it, as files of the build's workspace."""
    if not home.is_dir():
        return {}
    return {f"{_CCACHE}/{p.relative_to(home).as_posix()}": FileEntry(0o644, p.read_bytes())
            for p in sorted(home.rglob("*")) if p.is_file() and not p.is_symlink()}


def _keep_objects(home: Path, built: Tree) -> None:
    """Keep ccache's folder as this build left it: written beside, then put in place whole."""
    files = {p[len(_CCACHE) + 1:]: e for p, e in built.items() if p.startswith(_CCACHE + "/") and not e.link}
    if not files:
        return
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=home.name + ".", dir=home.parent))
    for path, entry in files.items():
        (staging / path).parent.mkdir(parents=True, exist_ok=True)
        (staging / path).write_bytes(entry.data)
    old = home.with_name(staging.name + ".old")
    if home.is_dir():
        home.rename(old)
    staging.rename(home)
    shutil.rmtree(old, ignore_errors=True)


def build_products(project: Tree, image: str, version: str, log: Callable[[str], None] = lambda line: None,
                   objects: str = "") -> Tree:
    """What the project's build writes next to its sources (extension modules, generated sources),
    built in a container of the task's `image` as root with no network, its compilers answered by the
    ccache folder kept as `objects` (the image's own, unnamed); UserError naming the build's last lines
    when it fails."""
    tree = dict(project)
    # matplotlib reads its build options from the file MPLSETUPCFG names, else mplsetup.cfg (3.5 on) or setup.cfg (3.4
    # and older): the build's scratch holds it, never the tree's own setup.cfg.
    options = f"MPLSETUPCFG=$PWD/{_BUILD_TMP}/mplsetup.cfg " if builds_matplotlib(project) else ""
    if options:
        tree[f"{_BUILD_TMP}/mplsetup.cfg"] = FileEntry(0o644, _MPLSETUP)
    home = compiled_objects_root() / (objects or image_id(image).removeprefix("sha256:")[:32])
    kept = _kept_objects(home)
    tree.update(kept)
    command = _command(project)
    limits = SandboxLimits(agent_uid=0, cpus=2.0, memory_mb=4096, pids=1024, command_timeout_s=BUILD_TIMEOUT_S,
                           output_cap_bytes=16 * 1024, workspace_mb=6144, tmp_mb=1024, file_mb=1024)
    log(f"building the project's extension modules in its image: {command}")
    started = time.monotonic()
    with open_sandbox("docker", image=image, limits=limits, name_hint="build") as box:
        box.put_tree(tree)
        # No .git to read a version from: setuptools_scm is told the version the task states.
        scm = shlex.quote(version)
        done = box.exec(f"export {options}SETUPTOOLS_SCM_PRETEND_VERSION={scm} MAX_JOBS=2 TMPDIR=$PWD/{_BUILD_TMP}; "
                        f"mkdir -p {_BUILD_TMP}; {_WITH_CCACHE}"
                        f"{command} 2>&1 | tail -12 | cut -c1-1000; status=${{PIPESTATUS[0]}}; [ $status = 0 ] && {_CCACHE_COUNTS}; "
                        "exit $status", timeout=BUILD_TIMEOUT_S)
        if done.exit_code != 0:
            tail = " | ".join(line for line in (done.stdout + done.stderr).splitlines()[-6:] if line.strip())
            raise UserError(f"the project's build ({command}) fails in the task's image"
                            f"{' (timed out)' if done.timed_out else ''}: {tail[-600:]}")
        everything = box.get_tree()
    _keep_objects(home, everything)
    built = without_caches(everything)
    products = {p: e for p, e in built.items() if p not in project and not _SCRATCH.search(p)}
    log(f"the build wrote {len(products)} file(s) next to the sources "
        f"({sum(p.endswith('.so') for p in products)} extension module(s)) in {time.monotonic() - started:.0f} s, "
        f"{_reused(done.stdout)}: they join the fixture")
    return products


def _reused(output: str) -> str:
    """How many of the build's compilations ccache answered from an earlier build's objects."""
    counts = dict(re.findall(r"^(direct_cache_hit|preprocessed_cache_hit|cache_miss)\s+(\d+)$", output, re.MULTILINE))
    if not counts:
        return "no compiled objects kept"
    hits = int(counts.get("direct_cache_hit", 0)) + int(counts.get("preprocessed_cache_hit", 0))
    return f"{hits} of {hits + int(counts.get('cache_miss', 0))} compilations taken from an earlier build's objects"


def builds_matplotlib(project: Tree) -> bool:
    """Whether the project is matplotlib's tree, whose build the image points at Debian's freetype and qhull: its
    build options' template (`mplsetup.cfg.template` from 3.5 on, `setup.cfg.template` beside `setupext.py`
    before)."""
    return "mplsetup.cfg.template" in project or ("setup.cfg.template" in project and "setupext.py" in project)


def system_build_packages(project: Tree, apt: Collection[str] = ()) -> list[str]:
    """The Debian packages the task's image needs to build the project (`apt`: those SWE-bench's pre-install
    steps install)."""
    own = MATPLOTLIB_PACKAGES if builds_matplotlib(project) else ()
    return sorted({*BUILD_PACKAGES, *own, *apt})


def built_fixture_products(folder: Path, task_id: str, project: Tree, version: str,
                           log: Callable[[str], None] = lambda line: None) -> Tree:
    """Build the task's image (`folder/image`), then the project in it: the files its build writes."""
    from endstate.sandbox import build_task_image

    image = build_task_image(folder / "image" / "Dockerfile", task_id, log=log)
    return build_products(project, image, version, log, objects_folder(task_id))


def _missing_submodule(project: Tree) -> str | None:
    """A git submodule (`.gitmodules`) that setup.py imports and the tree does not hold: the build cannot run."""
    paths = re.findall(r"^\s*path\s*=\s*(\S+)\s*$", _text(project, ".gitmodules"), flags=re.MULTILINE)
    imported = set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", _text(project, "setup.py"), flags=re.MULTILINE))
    for path in paths:
        if path.strip("/") in imported and not any(p.startswith(path.strip("/") + "/") for p in project):
            return path.strip("/")
    return None


def build_inputs(project: Tree, env: SwebenchEnv | None,
                 log: Callable[[str], None] = lambda line: None) -> tuple[Tree, list[str], list[str]]:
    """(the tree the image's requirements are read from: the project as SWE-bench's pre-install edits
    leave it; what its build imports, none for a project that compiles nothing; the Debian packages the
    image needs for SWE-bench's steps and the build) of a project in SWE-bench's environment `env`."""
    declared = pre_install_tree(project, env.pre_install if env else [], log)
    apt = list(env.apt) if env else []
    if not needs_build(project):
        return declared, [], apt
    if (submodule := _missing_submodule(project)) is not None:
        raise UserError(f"the project's build imports {submodule}, its git submodule, which the clone does not "
                        f"hold: run `git submodule update --init {submodule}` in the clone (with network), or put a "
                        "clone of its repository beside the project's in the folder of clones, and import again")
    build = build_requirements(declared, log) or _imported_by_setup(declared)
    return declared, _cython_before_3(build, env.pins if env else [], log), system_build_packages(project, apt)


def _cython_before_3(build: list[str], pins: Collection[str], log: Callable[[str], None]) -> list[str]:
    """The build's requirements, with Cython below 3 where neither they nor SWE-bench's pins ask for 3 or
    later. Cython 3.0 (2023-07) changed the language its `.pyx` files are read in (`language_level=3`, C
    functions that propagate exceptions, `binding=True`), and a project written for 0.29 that bounds it from
    below only (scikit-learn 0.22: `Cython>=0.28.5`; before it, no bound: `cython`) stops on a
    `CompileError` under 3.x; 0.29 is in every such bound."""
    cython = [r.split(";")[0] for r in [*build, *pins] if requirement_name(r) == "cython"]
    if not cython or any(re.search(r"(==|>=|~=|>)\s*([3-9]|\d{2,})", r) for r in cython):
        return build
    log("the build's Cython is taken below 3 (cython<3): neither the project nor SWE-bench's environment asks "
        "for 3, whose language defaults stop a .pyx written for 0.29")
    return [*build, "cython<3"]


def _imported_by_setup(project: Tree) -> list[str]:
    """What a build that declares none of its requirements imports (scikit-learn before 0.22: no
    pyproject.toml, no setup_requires; its setup.py imports numpy.distutils and cythonizes): setuptools,
    and numpy and Cython where a setup file imports them or Cython sources are there. Never none, since a
    compiled project's build is run where its requirements are."""
    setups = "".join(_text(project, p) for p in project if p == "setup.py" or p.endswith("/setup.py"))
    wanted = ["setuptools"]
    wanted += ["numpy"] if re.search(r"^\s*(?:import|from)\s+numpy\b", setups, flags=re.MULTILINE) else []
    wanted += ["cython"] if re.search(r"^\s*(?:import|from)\s+Cython\b", setups, flags=re.MULTILINE) or \
        any(p.endswith(".pyx") for p in project) else []
    return wanted
