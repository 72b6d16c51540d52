"""A task's own image when its project declares dependencies.

`declared_requirements` reads what the project says it needs to run and to be tested:
`pyproject.toml` ([project] dependencies, the test extras and dependency groups),
`setup.cfg` (install_requires, test extras), `setup.py` (the same keywords, where they
are literal lists, and the requirements files it reads), tox.ini's [testenv] deps, and
the requirements files any of those name. pytest
itself is left out: the harness runs its own, isolated. The project is never
installed: the tests import it from the workspace, which is first on sys.path.

`pinned_requirements` resolves them (wheels from PyPI, kept in the host's wheelhouse) and
`write_task_image` puts an image folder in the task: a Dockerfile `FROM` endstate's
sandbox image that installs the pinned wheels (`requirements.txt`, with hashes) with
no index and no network; `endstate.sandbox.build_task_image` brings the wheels.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import tomllib
from collections.abc import Callable, Collection
from pathlib import Path

from endstate.errors import UserError
from endstate.sandbox import DEFAULT_IMAGE, Tree
from endstate.task import parse_python

__all__ = ["TEST_EXTRAS", "declared_requirements", "pinned_requirements", "requirement_name", "write_task_image"]

#: Extras and dependency groups that hold what a project's tests need.
TEST_EXTRAS = ("test", "tests", "testing")
#: Left out: the harness brings its own pytest (and keeps it apart from the project's packages).
_NOT_INSTALLED = {"pytest"}
#: Left out unless the project's addopts needs them: tools around the tests (coverage, linters,
#: packaging, docs) that no test imports.
_TOOLING = {"pytest-cov", "coverage", "coveralls", "codecov", "flake8", "ruff", "black", "mypy", "isort", "pylint",
            "twine", "tox", "check-manifest", "pre-commit", "sphinx", "wheel", "setuptools", "build"}

_DOCKERFILE = f"""\
# Made by `endstate tasks new`: endstate's sandbox image with the project's declared
# dependencies installed from the wheels requirements.txt pins (by sha256). The host
# downloads them; this build has no network and no package index.
FROM {DEFAULT_IMAGE}
COPY requirements.txt /tmp/endstate-requirements.txt
COPY wheels/ /tmp/endstate-wheels/
RUN python3 "$(ls /tmp/endstate-wheels/pip-*.whl)/pip" install --no-index --find-links /tmp/endstate-wheels \\
      --no-deps --require-hashes --no-compile --break-system-packages --root-user-action=ignore \\
      --disable-pip-version-check --quiet -r /tmp/endstate-requirements.txt \\
 && rm -rf /tmp/endstate-wheels /tmp/endstate-requirements.txt \\
 && python3 -c "import pytest, sys; assert pytest.__file__.startswith('/opt/endstate/pytest/'), pytest.__file__"
"""


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def _text(project: Tree, path: str) -> str | None:
    entry = project.get(path)
    return entry.data.decode("utf-8", errors="replace") if entry is not None and not entry.link else None


def _lines(value: str) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in value.splitlines() if line.split("#", 1)[0].strip()]


def _requirements_file(project: Tree, path: str, seen: set[str]) -> list[str]:
    path = posixpath.normpath(path)
    if path in seen:
        return []
    seen.add(path)
    text = _text(project, path)
    if text is None:
        raise UserError(f"the project names the requirements file {path}, which its tree does not hold")
    found = []
    for line in _lines(text):
        if line.startswith(("-r", "--requirement")):
            name = line.split(None, 1)[1] if " " in line else line[2:]
            found += _requirements_file(project, posixpath.join(posixpath.dirname(path), name.strip()), seen)
        elif not line.startswith("-"):
            found.append(line)
    return found


def _pyproject(project: Tree, seen: set[str]) -> list[str]:
    text = _text(project, "pyproject.toml")
    if text is None:
        return []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"the project's pyproject.toml does not parse ({exc})") from None
    table = data.get("project", {})
    found = [str(r) for r in table.get("dependencies", [])]
    extras = table.get("optional-dependencies", {})
    groups = data.get("dependency-groups", {})
    for key in TEST_EXTRAS:
        found += [str(r) for r in extras.get(key, [])]
        found += [r for r in groups.get(key, []) if isinstance(r, str)]
    dynamic = data.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("dependencies", {})
    for name in dynamic.get("file", []) if isinstance(dynamic, dict) else []:
        found += _requirements_file(project, name, seen)
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


def _setup_cfg(project: Tree) -> list[str]:
    parser = _ini(project, "setup.cfg")
    if parser is None:
        return []
    found = _lines(parser.get("options", "install_requires", fallback=""))
    for key in TEST_EXTRAS:
        found += _lines(parser.get("options.extras_require", key, fallback=""))
    return [line for line in found if not line.startswith(("file:", "attr:"))]


def _setup_py(project: Tree, seen: set[str]) -> list[str]:
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
    for call in (n for n in ast.walk(module) if isinstance(n, ast.Call)):
        for keyword in call.keywords:
            node = names.get(keyword.value.id, keyword.value) if isinstance(keyword.value, ast.Name) else keyword.value
            try:
                value = ast.literal_eval(node)
            except ValueError:
                continue
            if keyword.arg in ("install_requires", "tests_require") and isinstance(value, (list, tuple)):
                found += [str(v) for v in value]
            elif keyword.arg == "extras_require" and isinstance(value, dict):
                for key in TEST_EXTRAS:
                    found += [str(v) for v in value.get(key, [])]
    return found


def _tox_requirements(project: Tree, seen: set[str]) -> list[str]:
    """tox's [testenv] deps: requirements, and the requirements files it names (`-r file`)."""
    parser = _ini(project, "tox.ini")
    if parser is None:
        return []
    found = []
    for line in _lines(parser.get("testenv", "deps", fallback="")):
        if line.startswith("-r"):
            name = re.sub(r"^\{toxinidir\}/", "", line[2:].strip())
            found += _requirements_file(project, name, seen)
        elif not line.startswith(("-", "{", ".")) and "{" not in line:
            found.append(line)
    return found


def declared_requirements(project: Tree, *, keep: Collection[str] = ()) -> list[str]:
    """What the project declares it needs to run and to be tested, as requirement strings
    (sorted, one per distribution name as first seen), pytest, the project itself and tooling
    no test imports left out (`keep`: plugins its configuration needs, kept whatever they are)."""
    seen: set[str] = set()
    found = _pyproject(project, seen) + _setup_cfg(project) + _setup_py(project, seen) + _tox_requirements(project, seen)
    own = {requirement_name(n) for n in _own_names(project)}
    kept: dict[str, str] = {}
    for requirement in found:
        name = requirement_name(requirement)
        kept_anyway = name in {requirement_name(k) for k in keep}
        if name and name not in _NOT_INSTALLED and name not in own and (name not in _TOOLING or kept_anyway):
            kept.setdefault(name, requirement.strip())
    return [kept[name] for name in sorted(kept)]


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


def pinned_requirements(project: Tree, *, keep: Collection[str] = (),
                        log: Callable[[str], None] = lambda line: None) -> tuple[str, list[str]]:
    """The pinned requirements.txt of the task's own image (empty when the project declares nothing
    that applies to the sandbox's Python) and the distributions it installs. The wheels are
    downloaded (PyPI) into the host's wheelhouse, from which the image builds offline."""
    requirements = declared_requirements(project, keep=keep)
    if not requirements:
        return "", []
    from endstate.sandbox import resolve_requirements

    log(f"the project declares {', '.join(requirements)}: resolving wheels for the task's image")
    pinned = resolve_requirements(requirements)
    installed = [requirement_name(line) for line in pinned.splitlines()]
    if set(installed) <= {"pip"}:  # nothing applies to the sandbox's Python (markers): no image of its own
        return "", []
    return pinned, installed


def write_task_image(folder: Path, pinned: str) -> str:
    """Write the image folder (Dockerfile, pinned requirements.txt) into the task folder;
    returns the Dockerfile's path relative to the task folder, for task.toml."""
    image = Path(folder) / "image"
    image.mkdir(parents=True, exist_ok=True)
    (image / "Dockerfile").write_text(_DOCKERFILE, encoding="utf-8")
    (image / "requirements.txt").write_text(pinned, encoding="utf-8")
    return "image/Dockerfile"
