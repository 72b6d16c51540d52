"""A task's own image: the project's test environment, when it declares one.

`declared_requirements` reads what the project says it needs to run and to be tested:
`pyproject.toml` ([project] dependencies, the test extras and dependency groups; Poetry's
dependencies and its dev and test groups),
`setup.cfg` (install_requires, test extras), `setup.py` (the same keywords, where they
are literal lists, and the requirements files it reads), tox's [testenv] deps (tox.ini,
or pyproject's legacy_tox_ini; factor lines only for the factors of a plain test run),
the requirements files any of those name, and test requirements files by their usual
names. Left out: the project itself, and tools around the tests that no test imports
(release, lint, typing, docs: `is_tooling`), unless the configuration's addopts needs them.
pytest is in: the project's tests run under its own pytest and plugins, never endstate's.

`pinned_requirements` resolves them with pytest (wheels from PyPI, kept in the host's
wheelhouse) and `write_task_image` puts an image folder in the task: a Dockerfile `FROM`
endstate's sandbox image that replaces its pytest with the pinned wheels
(`requirements.txt`, with hashes), installed with no index and no network, and lays the
project's own metadata into site-packages (`endstate.authoring._installed`);
`endstate.sandbox.build_task_image` brings the wheels.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable, Collection
from pathlib import Path

from endstate.authoring._condaenv import conda_requirements, with_conda_packages
from endstate.authoring._installed import (
    asks_for_metadata,
    cfg_requirements,
    helper_requirements,
    project_metadata,
    requirement_lines,
    runtime_requirements,
    setup_literal,
)
from endstate.authoring._loopback import loopback_files, loopback_requirements
from endstate.authoring._setuppy import static_value, top_level_values
from endstate.authoring._swebenchenv import ENV_DAY, SwebenchEnv, env_python, env_requirements, requirements_file_pins
from endstate.authoring._versions import (
    locked_versions,
    pytest_of_its_time,
    release_before,
    requirement_name,
    resolve_pinned,
)
from endstate.errors import UserError
from endstate.sandbox import DEFAULT_IMAGE, SANDBOX_PYTHON, SYSTEM_PACKAGES, Tree, python_of
from endstate.task import parse_python

__all__ = ["TEST_EXTRAS", "declared_requirements", "image_files", "release_before", "is_tooling", "locked_versions", "pinned_requirements", "pytest_of_its_time", "requirement_name", "write_task_image"]

#: Extras and dependency groups that hold what a project's tests need.
TEST_EXTRAS = ("test", "tests", "testing")
#: Left out unless the project's addopts needs them: tools around the tests (release, lint, typing,
#: docs, packaging) that no test imports. Coverage and pytest-cov stay: their markers are the tests'.
_TOOLING = {"autopep8", "bandit", "black", "blue", "build", "bump-my-version", "bump2version", "bumpversion",
            "check-manifest", "codecov", "codespell", "coveralls", "doc8", "docformatter", "flit", "flit-core",
            "furo", "hatch", "hatch-vcs", "hatchling", "ipdb", "ipython", "isort", "jupyter", "mypy", "myst-parser",
            "nox", "pdbpp", "pdm", "pep8", "pip", "pip-tools", "poetry", "pre-commit", "pycodestyle", "pydocstyle",
            "pyflakes", "pyright", "pyroma", "pytest-black", "pytest-checkdocs", "pytest-enabler", "pytest-flake8",
            "pytest-isort", "pytest-mypy", "pytest-mypy-plugins", "pytest-perf", "pytest-pylint", "pytest-ruff",
            "pytype", "pyupgrade", "readme-renderer", "recommonmark", "restructuredtext-lint", "ruff",
            "setuptools", "setuptools-scm", "tbump", "towncrier", "tox", "twine", "wheel", "yapf", "zest-releaser"}
_TOOLING_PREFIXES = ("types-", "flake8", "pylint", "sphinx", "mypy-boto3")


def is_tooling(name: str) -> bool:
    """Whether a distribution (normalised name) is a tool around the tests rather than something they import."""
    return name in _TOOLING or name.startswith(_TOOLING_PREFIXES) or name.endswith("-stubs")


_DOCKERFILE = f"""\
# Made by `endstate tasks new`: endstate's sandbox image with the project's own test
# environment. Its declared dependencies, its own pytest and pytest plugins (in place of
# the sandbox's pytest, which is removed) are installed from the wheels requirements.txt
# pins by sha256; installed/, where present, is the project's own metadata. The host
# downloads the wheels: this build has no network and no package index. Everything here
# is root's and is built before any agent runs.
FROM {DEFAULT_IMAGE}
COPY requirements.txt /tmp/endstate-requirements.txt
COPY wheels/ /tmp/endstate-wheels/
{{copy}}RUN rm -rf /opt/endstate/pytest /usr/lib/python3/dist-packages/endstate-pytest.pth \\
 && PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore \\
    python3 "$(ls /tmp/endstate-wheels/pip-*.whl)/pip" install --no-index --find-links /tmp/endstate-wheels \\
      --no-deps --ignore-installed --require-hashes --no-compile --disable-pip-version-check --quiet \\
      -r /tmp/endstate-requirements.txt \\
{{place}} && rm -rf /tmp/endstate-wheels /tmp/endstate-requirements.txt \\
 && python3 -c "{{check}}"
"""
#: The image's pytest is the wheel pinned, in pip's folder; pytest's own tree has none (its tests run its own).
_PYTEST_CHECK = "import pytest, sys; assert pytest.__file__.startswith('/usr/local/lib/'), pytest.__file__"
_NO_PYTEST_CHECK = ("import importlib.util as u; assert not (u.find_spec('pytest') or u.find_spec('_pytest')), "
                    "'a pytest other than the tree\\'s'")
#: The line that puts the project's own metadata (a .dist-info endstate wrote) among the installed packages:
#: beside pytest's (pytest's own tree: beside pluggy's, which it needs), where pip installed (Debian's 3.9
#: names a sysconfig purelib that is not on its sys.path).
_PLACE = (' && cp -R /tmp/endstate-installed/. "$(python3 -c \'import os, {anchor}; '
          'print(os.path.dirname(os.path.dirname({anchor}.__file__)))\')" '
          "\\\n && rm -rf /tmp/endstate-installed \\\n")


def _text(project: Tree, path: str) -> str | None:
    entry = project.get(path)
    return entry.data.decode("utf-8", errors="replace") if entry is not None and not entry.link else None


def _requirements_file(project: Tree, path: str, seen: set[str]) -> list[str]:
    path = posixpath.normpath(path)
    if path in seen:
        return []
    seen.add(path)
    text = _text(project, path)
    if text is None:
        raise UserError(f"the project names the requirements file {path}, which its tree does not hold")
    found = []
    for line in requirement_lines(text):
        if line.startswith(("-r", "--requirement")):
            name = line.split(None, 1)[1] if " " in line else line[2:]
            found += _requirements_file(project, posixpath.join(posixpath.dirname(path), name.strip()), seen)
        elif not line.startswith("-"):
            found.append(line)
    return found


def _pyproject(project: Tree, seen: set[str], extras: tuple[str, ...] = TEST_EXTRAS) -> list[str]:
    text = _text(project, "pyproject.toml")
    if text is None:
        return []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"the project's pyproject.toml does not parse ({exc})") from None
    table = data.get("project", {})
    found = [str(r) for r in table.get("dependencies", [])]
    optional = table.get("optional-dependencies", {})
    groups = data.get("dependency-groups", {})
    for key in extras:
        found += _extra(optional, key, requirement_name(str(table.get("name", ""))), set())
        found += [r for r in groups.get(key, []) if isinstance(r, str)]
    found += _poetry(data.get("tool", {}).get("poetry", {}))
    dynamic = data.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("dependencies", {})
    for name in dynamic.get("file", []) if isinstance(dynamic, dict) else []:
        found += _requirements_file(project, name, seen)
    return found


def _poetry_spec(constraint: str) -> str:
    """A Poetry version constraint as PEP 440 (`^7.2` -> `>=7.2,<8`, `~1.2.3` -> `>=1.2.3,<1.3`, `*` -> "")."""
    parts = []
    for item in filter(None, (c.strip() for c in constraint.split(","))):
        operator = item[0] if item[0] in "^~" and not item.startswith("~=") else ""
        version = item[1:].strip() if operator else item
        numbers = [int(n) for n in re.findall(r"\d+", version.split("-")[0])[:3]]
        if version == "*" or not numbers and operator:
            continue
        if operator == "^":
            first = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
            upper = numbers[:first] + [numbers[first] + 1]
        elif operator == "~":
            upper = [numbers[0] + 1] if len(numbers) == 1 else [numbers[0], numbers[1] + 1]
        else:
            parts.append(item if item[0] in "<>=!~" else f"=={item}")
            continue
        parts.append(f">={version},<{'.'.join(map(str, upper))}")
    return ",".join(parts)


def _poetry(table: dict) -> list[str]:
    """Poetry's runtime dependencies, its old dev-dependencies and its dev and test groups, as
    requirements (what is optional, or comes from a path or a VCS, left out)."""
    tables = [table.get("dependencies", {}), table.get("dev-dependencies", {})]
    tables += [table.get("group", {}).get(g, {}).get("dependencies", {}) for g in ("dev", *TEST_EXTRAS)]
    found = []
    for deps in tables:
        for name, spec in (deps.items() if isinstance(deps, dict) else ()):
            if isinstance(spec, dict):
                if spec.get("optional") or not isinstance(spec.get("version"), str):
                    continue
                spec = spec["version"]
            if name.lower() != "python" and isinstance(spec, str):
                found.append(f"{name}{_poetry_spec(spec)}")
    return found


def _extra(extras: dict, key: str, own: str, done: set[str]) -> list[str]:
    """The requirements of one extra, with those of the project's own extras it names
    (`tests = ["attrs[tests-no-zope]", ...]`) taken in."""
    if key in done:
        return []
    done.add(key)
    found = []
    for requirement in map(str, extras.get(key, [])):
        named = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*\[([^\]]*)\]\s*(;.*)?", requirement)
        if own and named and requirement_name(named.group(1)) == own:
            for other in named.group(2).split(","):
                found += _extra(extras, other.strip(), own, done)
        else:
            found.append(requirement)
    return found


def _ini(project: Tree, path: str) -> configparser.ConfigParser | None:
    """An ini-style file of the project (setup.cfg, tox.ini), or None if it is absent or unreadable."""
    text = _text(project, path)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _setup_cfg(project: Tree, extras: tuple[str, ...] = TEST_EXTRAS) -> list[str]:
    parser = _ini(project, "setup.cfg")
    if parser is None:
        return []
    found = cfg_requirements(parser.get("options", "install_requires", fallback=""))
    for key in extras:
        found += cfg_requirements(parser.get("options.extras_require", key, fallback=""))
    return [line for line in found if not line.startswith(("file:", "attr:"))]


def _setup_py(project: Tree, seen: set[str], extras: tuple[str, ...] = TEST_EXTRAS) -> list[str]:
    text = _text(project, "setup.py")
    if text is None:
        return []
    try:
        module = parse_python(text)
    except SyntaxError:
        return []
    found: list[str] = []
    # A requirements file setup.py reads (install_requires=open("requirements.txt")...).
    for node in ast.walk(module):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and re.fullmatch(r"requirements[\w.-]*\.txt", node.value) and node.value in project:
            found += _requirements_file(project, node.value, seen)
    # `install_requires=REQUIRES` with `REQUIRES = [...]` at the top of setup.py.
    names = {target.id: node.value for node in module.body if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name)}
    # What the top level builds in steps (`EXTRAS['dev'] = EXTRAS['tests'] + [...]`), where it reads plainly.
    values = top_level_values(module)
    for call in (n for n in ast.walk(module) if isinstance(n, ast.Call)):
        for keyword in call.keywords:
            node = names.get(keyword.value.id, keyword.value) if isinstance(keyword.value, ast.Name) else keyword.value
            try:
                value = static_value(keyword.value, values)
            except ValueError:
                try:
                    value = setup_literal(node, names)
                except ValueError:
                    continue
            if keyword.arg in ("install_requires", "tests_require") and isinstance(value, (list, tuple)):
                found += [str(v) for v in value]
            elif keyword.arg == "extras_require" and isinstance(value, dict):
                for key in extras:
                    found += [str(v) for v in value.get(key, [])]
    return found


#: tox factors of a plain test run under the sandbox's Python: a factor line (`py311: mock`) counts
#: when each of its factors (joined by `-`) is one of these, or the negation of another.
_TEST_FACTORS = {"py", "py3", "py311", "py3.11", "test", "tests", "testing", "unit"}
_FACTOR_LINE = re.compile(r"([\w.!{}-]+(?:,[\w.!{}-]+)*)\s*:\s+(.*)")


def _factors_hold(condition: str) -> bool:
    """Whether a tox factor condition (`a,b-c`: a, or b and c) holds for a plain test run."""
    def holds(factor: str) -> bool:
        return factor[1:] not in _TEST_FACTORS if factor.startswith("!") else factor in _TEST_FACTORS

    return any(all(holds(f) for f in alternative.split("-")) for alternative in condition.split(","))


def _tox_text(project: Tree) -> str | None:
    text = _text(project, "tox.ini")
    if text is not None:
        return text
    try:  # tox reads pyproject's [tool.tox] legacy_tox_ini too
        legacy = tomllib.loads(_text(project, "pyproject.toml") or "").get("tool", {}).get("tox", {}).get("legacy_tox_ini")
    except tomllib.TOMLDecodeError:
        return None
    return legacy if isinstance(legacy, str) else None


def _tox_requirements(project: Tree, seen: set[str]) -> list[str]:
    """tox's [testenv] deps: requirements, and the requirements files it names (`-r file`); a factor
    line (`dev: -r requirements-dev.txt`) only where its factors are those of a plain test run."""
    text = _tox_text(project)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return []
    found = []
    for line in requirement_lines(parser.get("testenv", "deps", fallback="")):
        factored = _FACTOR_LINE.fullmatch(line)
        if factored:
            if not _factors_hold(factored.group(1)):
                continue
            line = factored.group(2).strip()
        if line.startswith("-r"):
            name = re.sub(r"^\{toxinidir\}/", "", line[2:].strip())
            found += _requirements_file(project, name, seen)
        elif not line.startswith(("-", "{", ".")) and "{" not in line:
            found.append(line)
    return found


#: Where projects keep what their tests need, when nothing else names the file.
_TEST_REQUIREMENTS = ("requirements-test.txt", "requirements-tests.txt", "requirements-testing.txt",
                      "requirements_test.txt", "requirements_tests.txt", "test-requirements.txt",
                      "test_requirements.txt", "tests-requirements.txt", "requirements/test.txt",
                      "requirements/tests.txt", "requirements/testing.txt", "tests/requirements.txt",
                      "test/requirements.txt", "testing/requirements.txt")


def _test_requirements_files(project: Tree, seen: set[str]) -> list[str]:
    return [r for name in _TEST_REQUIREMENTS if name in project for r in _requirements_file(project, name, seen)]


def declared_requirements(project: Tree, *, keep: Collection[str] = (), also: Collection[str] = (),
                          files: Collection[str] = (), extras: Collection[str] = ()) -> list[str]:
    """What the project declares it needs to run and to be tested, as requirement strings
    (sorted, one per name and environment marker as first seen), the project itself and tooling no
    test imports left out (`keep`: plugins its configuration needs, kept whatever they are). `also`,
    `files`, `extras`: requirements, requirements files and extras of the project to take too
    (SWE-bench's environment of the instance: `_swebenchenv`); `also` comes first, kept whatever it is."""
    seen: set[str] = set()
    wanted = tuple(dict.fromkeys((*extras, *TEST_EXTRAS)))
    found = (list(also) + _pyproject(project, seen, wanted) + _setup_cfg(project, wanted)
             + _setup_py(project, seen, wanted) + helper_requirements(project)
             + [r for f in files for r in _requirements_file(project, f, seen)]
             + _tox_requirements(project, seen) + _test_requirements_files(project, seen))
    # What the project needs to run is never tooling (Sphinx's sphinxcontrib-*, pylint's isort).
    keep = {requirement_name(k) for k in [*keep, *also, *runtime_requirements(project)]}
    own = {requirement_name(n) for n in _own_names(project)}
    kept: dict[tuple[str, str], str] = {}
    for requirement in map(_without_url, found):
        name = requirement_name(requirement)
        local = re.match(r"\s*[\w.-]*/", requirement)  # a folder of the tree (flask's `examples/tutorial[test]`)
        local = local or _URL.match(requirement)  # no PyPI name (Sphinx 3.1's `git+https://...html5lib-python`)
        if name and name not in own and not local and (not is_tooling(name) or name in keep):
            # pylint's `dill>=0.3.6; python_version>='3.11'` beside its `<'3.11'` twin: one per marker.
            marker = "".join(requirement.partition(";")[2].split()).replace('"', "'")
            kept.setdefault((name, marker), requirement.strip())
    return [kept[key] for key in sorted(kept)]


#: A requirement that is a URL (a VCS's `git+https://`, an archive's, a `file:`): the wheels come from PyPI alone.
_URL = re.compile(r"\s*([a-z]+\+)?[a-z]+:")
_AT_URL = re.compile(r"\s*([A-Za-z0-9][\w.-]*(?:\[[^\]]*\])?)\s*@\s*\S+(\s*;.*)?")


def _without_url(requirement: str) -> str:
    """`name @ url` as `name` (the distribution PyPI releases, with its marker); any other as it is."""
    named = _AT_URL.fullmatch(requirement)
    return named.group(1) + (named.group(2) or "") if named else requirement


def _own_names(project: Tree) -> list[str]:
    names = []
    text = _text(project, "pyproject.toml")
    if text:
        try:
            names.append(str(tomllib.loads(text).get("project", {}).get("name", "")))
        except tomllib.TOMLDecodeError:
            pass
    cfg = _text(project, "setup.cfg")
    if cfg:
        match = re.search(r"^name\s*=\s*(\S+)", cfg, flags=re.MULTILINE)
        names += [match.group(1)] if match else []
    py = _text(project, "setup.py")
    if py:
        match = re.search(r"""\bname\s*=\s*['"]([^'"]+)['"]""", py)
        names += [match.group(1)] if match else []
    return [n for n in names if n]


def pinned_requirements(project: Tree, *, keep: Collection[str] = (), made: str = "",
                        log: Callable[[str], None] = lambda line: None,
                        env: SwebenchEnv | None = None, bounds: Collection[str] = (),
                        build: Collection[str] = (), left_out: list[str] | None = None,
                        added: Collection[str] = (), conda: bool = True,
                        conda_broken: Collection[str] = ()) -> tuple[str, list[str]]:
    """The pinned requirements.txt of the task's own image (empty when the project declares nothing
    that applies to the sandbox's Python) and the distributions it installs. The wheels are
    downloaded (PyPI) into the host's wheelhouse, from which the image builds offline.
    The versions its lock file pins are taken where they resolve; else `made`, the date of the project's
    commit (ISO 8601), bounds its pytest (`pytest_of_its_time`; see `_versions.resolve_pinned`).
    `bounds`: requirements that hold a dependency back (`werkzeug<3`: `release_before`). `left_out`: each
    declared distribution the image is made without (no wheel resolves) is added to it. `added`: what
    the project needs beyond its own declarations (what a SWE-bench record's fix declares: `fix_declares`).
    `conda`: what SWE-bench's conda environment file names joins, where PyPI has it (`_condaenv`), less
    `conda_broken` (distributions whose import raises in the image: `broken_imports`)."""
    target = env_python(env, log) if env else None
    also, pins, extras, files = env_requirements(env, project, target.python if target else SANDBOX_PYTHON, log,
                                                 build) \
        if env else ([], {}, [], [])
    if env:  # the file's exact pins, as its `pip install -r` installs them before the project; the spec's win
        lines = [line for path in files for line in _requirements_file(project, path, set())]
        pins = {**requirements_file_pins(env, project, lines, build, log), **pins}
    loopback = loopback_requirements(project)
    if loopback:
        log(f"the project's code reads HTTPBIN_URL: the task's image serves httpbin on loopback ({', '.join(loopback)})")
    requirements = declared_requirements(project, keep=keep, also=[*added, *also, *loopback], files=files, extras=extras)
    # another Python's image needs pytest
    if not requirements and not build and not asks_for_metadata(project) and target is None:
        return "", []
    log(f"the project declares {', '.join(requirements) or 'no dependency'}: resolving wheels for the task's image")
    # The project's tests run under its own pytest: the version it pins, else the newest its pins allow.
    # pytest's own tree is the pytest its tests run (SWE-bench installs it in place): no other joins it.
    names = {requirement_name(r) for r in [*requirements, *_own_names(project)]}
    asked = requirements + [extra for extra, name in (("pytest", "pytest"), ("setuptools<81", "setuptools"))
                            if name not in names and (name == "pytest" or _imports_pkg_resources(project))]
    asked += list(bounds) + list(build)  # build: what the project's build imports (`_build.build_requirements`)
    if target and tuple(map(int, target.python.split("."))) < (3, 8) and "importlib-metadata" not in names:
        # The harness's runner reads the image's pytest plugins through it before 3.8; pytest 6 and 7 depend on it
        # there, the pytest 3.3.1 SWE-bench pins for astropy 1.3 does not.
        asked.append("importlib-metadata")
    pinned = resolve_pinned(project, asked, made=made, needed={"pytest", *map(requirement_name, keep)}, log=log,
                            pins=pins, target=target, env_day=ENV_DAY if env else "", left_out=left_out)
    text = _text(project, env.conda_env) if conda and env and env.conda_env else None
    if text:  # SWE-bench's environment is that file's, then its pins: what PyPI has of it joins
        broken = {requirement_name(name) for name in conda_broken}
        wanted = [r for r in _conda_wanted(conda_requirements(text)) if requirement_name(r) not in broken]
        pinned = with_conda_packages(pinned, wanted, as_of=ENV_DAY, target=target, log=log)
    # A first line naming another Python is a comment, no distribution.
    return pinned, [name for name in map(requirement_name, pinned.splitlines()) if name]


def _conda_wanted(requirements: list[str]) -> list[str]:
    """A conda file's packages that the tests may import: its tools around the tests (docs, lint, release),
    pytest and its plugins (the project's configuration names those it needs: `plugin_distributions`) left out."""
    def around(name: str) -> bool:
        return is_tooling(name) or name.startswith("pytest") or "sphinx" in name or name.endswith("-theme") \
            or name in ("numpydoc", "coverage")
    return [r for r in requirements if not around(requirement_name(r))]


def _imports_pkg_resources(project: Tree) -> bool:
    """pkg_resources comes with setuptools, which is otherwise left out as build tooling."""
    return any(p.endswith(".py") and b"pkg_resources" in e.data for p, e in project.items() if not e.link)


#: The system tools the project's code runs (`_systools`), from Debian's mirrors: the one step of the
#: build that has the host's network (`SYSTEM_PACKAGES` beside the Dockerfile says so to the builder).
_APT = f"""\
# The programs the project's code or tests run that the sandbox image lacks ({SYSTEM_PACKAGES}),
# from Debian's own signed mirrors.
COPY {SYSTEM_PACKAGES} /tmp/endstate-system-packages.txt
RUN apt-get update -qq && xargs -a /tmp/endstate-system-packages.txt apt-get install -y -qq --no-install-recommends \\
 && rm -rf /var/lib/apt/lists/* /tmp/endstate-system-packages.txt
"""


def _locales(names: Collection[str]) -> str:
    """The Dockerfile step that generates `names` (`en_US.UTF-8`), as SWE-bench's evaluation script does."""
    if not names:
        return ""
    edits = " && ".join(f"sed -i '/{name}/s/^# //g' /etc/locale.gen" for name in names)
    return f"# The locales SWE-bench's evaluation script sets for the tests ({', '.join(names)}).\nRUN {edits} && locale-gen\n"


def image_files(project: Tree, version: str) -> Tree:
    """The files the task's image lays into its site-packages: the project's own metadata (`project_metadata`)
    and, where its code reads `HTTPBIN_URL`, the plugin that serves httpbin on loopback (`_loopback`)."""
    return {**project_metadata(project, version), **loopback_files(project)}


def write_task_image(folder: Path, pinned: str, installed: Tree | None = None, system: Collection[str] = (),
                     locales: Collection[str] = ()) -> str:
    """Write the image folder (Dockerfile, pinned requirements.txt, `installed/`: files laid
    into the image's site-packages, the project's own metadata, `system`: Debian packages
    of the programs its tests run, and `locales` generated, as `en_US.UTF-8`: Debian's `locales`
    joins `system`) into the task folder; returns the Dockerfile's path relative to the task
    folder, for task.toml."""
    system = sorted({*system, "locales"} if locales else set(system))
    image = Path(folder) / "image"
    image.mkdir(parents=True, exist_ok=True)
    for path, entry in sorted((installed or {}).items()):
        target = image / "installed" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.data)
    base = python_of(pinned)[2]  # the image of the Python the wheels are for
    own_pytest = bool(pinned) and "pytest" not in map(requirement_name, pinned.splitlines())
    dockerfile = _DOCKERFILE.format(
        copy="COPY installed/ /tmp/endstate-installed/\n" if installed else "",
        place=_PLACE.format(anchor="pluggy" if own_pytest else "_pytest") if installed else "",
        check=_NO_PYTEST_CHECK if own_pytest else _PYTEST_CHECK) if pinned else f"FROM {DEFAULT_IMAGE}\n"
    dockerfile = dockerfile.replace(f"FROM {DEFAULT_IMAGE}\n", f"FROM {base}\n", 1)
    if system:
        (image / SYSTEM_PACKAGES).write_text("".join(f"{name}\n" for name in sorted(system)), encoding="utf-8")
        dockerfile = dockerfile.replace(f"FROM {base}\n", f"FROM {base}\n" + _APT + _locales(locales), 1)
    (image / "Dockerfile").write_text(dockerfile, encoding="utf-8")
    if pinned:
        (image / "requirements.txt").write_text(pinned, encoding="utf-8")
    return "image/Dockerfile"
