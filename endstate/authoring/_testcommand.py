"""How a project's tests are run, read from the project itself.

`project_test_command(project, targets)` is the one answer: `tasks new` writes what
it returns into task.toml (the tests_pass and holdout graders' `command`), and the
harness runs exactly that string through its own entry point for counting, for
`tasks check` and for grading (`endstate.grading.run_tests`). The string carries its
environment as leading `NAME=value` words; `PYTHONPATH=src` is how a src layout is
said, and the harness applies it after importing pytest (never from the graded tree).

What is read, in pytest's own order of precedence: `pytest.ini`, `pyproject.toml`
`[tool.pytest.ini_options]`, `tox.ini` `[pytest]`, `setup.cfg` `[tool:pytest]`; from
it `addopts` (its plugins must be installed in the task's image, which loads them as pytest
would: see `PLUGIN_OPTIONS`) and `pythonpath`.
The layout: a package under `src/` (and none at the top) puts `src` on PYTHONPATH,
unless the configuration's `pythonpath` already names it. A project whose tests use
unittest alone, with no pytest configuration, is run with `python -m unittest`.
"""

from __future__ import annotations

import configparser
import posixpath
import re
import shlex
import tomllib
from collections.abc import Collection, Sequence

import msgspec

from endstate.authoring._installed import project_name
from endstate.errors import UserError
from endstate.sandbox import Tree
from endstate.task import UNGUARDED, is_test_module

__all__ = ["SWEBENCH_RUNNERS", "runner_command", "runner_ids", "runner_args", "COUNT_TIMEOUT_S", "command_timeout", "ProjectTests", "PLUGIN_OPTIONS", "read_project_tests", "test_command", "project_test_command", "suite_paths",
           "plugin_distributions", "unknown_option_error"]

#: The limit of a counting run: a real project's whole suite may take minutes (attrs' ~1,300 tests).
COUNT_TIMEOUT_S = 1800.0
#: A task's test commands get the sandbox's 120 s, and this much more per test past the first 240 (a
#: limit, never a cost: deterministic, from the count, so the same fix makes the same task).
_SECONDS_PER_TEST = 0.5


def command_timeout(tests: int) -> int | None:
    """The `[sandbox] command_timeout` of a task whose suite runs `tests` tests (None: the default 120 s)."""
    seconds = 120 + max(0, tests - 240) * _SECONDS_PER_TEST
    return None if seconds <= 120 else int(-(-seconds // 60) * 60)


#: addopts options that belong to a pytest plugin: option prefix -> (distribution, module `-p` loads).
PLUGIN_OPTIONS: dict[str, tuple[str, str]] = {
    "--cov": ("pytest-cov", "pytest_cov.plugin"),
    "--no-cov": ("pytest-cov", "pytest_cov.plugin"),
    "-n": ("pytest-xdist", "xdist.plugin"),
    "--numprocesses": ("pytest-xdist", "xdist.plugin"),
    "--dist": ("pytest-xdist", "xdist.plugin"),
    "--timeout": ("pytest-timeout", "pytest_timeout"),
    "--benchmark": ("pytest-benchmark", "pytest_benchmark.plugin"),
    "--reruns": ("pytest-rerunfailures", "pytest_rerunfailures"),
    "--mypy": ("pytest-mypy", "pytest_mypy"),
    "--flake8": ("pytest-flake8", "pytest_flake8"),
    "--black": ("pytest-black", "pytest_black"),
    "--hypothesis": ("hypothesis", "hypothesis.extra.pytestplugin"),
    "--asyncio-mode": ("pytest-asyncio", "pytest_asyncio.plugin"),
    "--doctest-plus": ("pytest-doctestplus", "pytest_doctestplus.plugin"),
    "--mpl": ("pytest-mpl", "pytest_mpl.plugin"),
}


class ProjectTests(msgspec.Struct, frozen=True):
    """How a project's tests run."""

    #: "pytest" or "unittest".
    runner: str
    #: Folders (relative to the project) its code is imported from: its PYTHONPATH.
    import_paths: tuple[str, ...] = ()
    #: The file its pytest configuration was read from ("" when it has none).
    config: str = ""
    #: Plugin modules to load with `-p` (none: the harness loads those the image installs).
    plugins: tuple[str, ...] = ()
    #: For unittest: whether the top test folder is a package (`tests.test_x`) or not (`test_x`).
    package_tests: bool = True
    #: For unittest: the file pattern of its test modules (`*_test.py` where none starts with test).
    pattern: str = "test*.py"


# -- reading the configuration ---------------------------------------------------------------------
def _ini_section(text: str, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _pytest_config(project: Tree) -> tuple[str, dict[str, object]] | None:
    """(file, options) of the project's pytest configuration, in pytest's order of precedence."""
    def text(path: str) -> str | None:
        entry = project.get(path)
        return entry.data.decode("utf-8", errors="replace") if entry is not None and not entry.link else None

    for name in ("pytest.ini", ".pytest.ini"):
        if (found := text(name)) is not None:
            return name, dict(_ini_section(found, "pytest") or {})
    if (found := text("pyproject.toml")) is not None:
        try:
            table = tomllib.loads(found).get("tool", {}).get("pytest", {}).get("ini_options")
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"the project's pyproject.toml does not parse ({exc}): fix it or give --test-command") from None
        if isinstance(table, dict):
            return "pyproject.toml", table
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        if (found := text(name)) is not None and (options := _ini_section(found, section)) is not None:
            return name, dict(options)
    return None


def suite_paths(project: Tree, roots: Sequence[str]) -> list[str]:
    """`roots` (the top folders of the test modules) narrowed to the project's own `testpaths`, where its
    pytest configuration names some the tree holds: a bare `pytest` collects only those (attrs' testpaths
    leave out bench/, whose tests need a benchmark plugin of another environment)."""
    config = _pytest_config(project)
    wanted = [w.strip("/") for w in _words(config[1].get("testpaths"))] if config else []
    held = [w for w in wanted if w and not any(c in w for c in "*?[")
            and (w in project or any(path.startswith(w + "/") for path in project))]
    return held or list(roots)


def _words(value: object) -> list[str]:
    """An ini value (one string, split like a shell line) or a TOML list, as words."""
    if isinstance(value, list):
        return [str(v) for v in value]
    try:
        return shlex.split(str(value or ""))
    except ValueError:
        return str(value or "").split()


#: Plugins pytest itself ships, which `-p NAME` loads by their short name (`-p pytester`: pytest's own addopts).
_BUILTIN_PLUGINS = frozenset({
    "assertion", "cacheprovider", "capture", "debugging", "doctest", "faulthandler", "fixtures", "freeze_support",
    "helpconfig", "junitxml", "legacypath", "logging", "main", "mark", "monkeypatch", "nose", "pastebin", "pytester",
    "pytester_assertions", "python", "python_path", "recwarn", "reports", "runner", "setuponly", "setupplan",
    "skipping", "stepwise", "terminal", "threadexception", "tmpdir", "unittest", "unraisableexception", "warnings"})


def _own_module(project: Tree, module: str) -> bool:
    """Whether `module` (dotted) is one of the project's own files (`-p sklearn.tests.random_seed`)."""
    path = module.replace(".", "/")
    return any(f"{top}{path}{leaf}" in project for top in ("", "src/") for leaf in (".py", "/__init__.py"))


def _needed(addopts: list[str], project: Tree) -> dict[str, tuple[str, str]]:
    """option (or `-p` module) -> (distribution, module) of each plugin `addopts` uses that neither
    pytest nor the project itself provides."""
    needed: dict[str, tuple[str, str]] = {}
    for index, word in enumerate(addopts):
        if word == "-p" and index + 1 < len(addopts) and not addopts[index + 1].startswith("no:"):
            module = addopts[index + 1]
            if module.removeprefix("_pytest.") not in _BUILTIN_PLUGINS and not _own_module(project, module):
                needed.setdefault(module, (module.split(".")[0].replace("_", "-"), module))
            continue
        option = word.split("=", 1)[0]
        for prefix, plugin in PLUGIN_OPTIONS.items():
            if option == prefix or (prefix.startswith("--") and option.startswith(prefix + "-")):
                needed.setdefault(option, plugin)
    return needed


def plugin_distributions(project: Tree) -> list[str]:
    """The pytest plugins (distribution names) the project's addopts cannot run without."""
    config = _pytest_config(project)
    return sorted({d for d, _ in _needed(_words(config[1].get("addopts")), project).values()}) if config else []


def _plugins(config_file: str, addopts: list[str], installed: Collection[str], project: Tree) -> tuple[str, ...]:
    """Plugin modules to name with `-p`: none, since the harness loads every plugin the task's image
    installs as pytest would; UserError naming the first plugin `addopts` needs that the image lacks."""
    needed = _needed(addopts, project)
    have = {_normal(name) for name in installed}
    for option, (distribution, _module) in needed.items():
        if _normal(distribution) not in have:
            raise UserError(
                f"the project's {config_file} adds `{option}` to every pytest run (addopts), which needs the "
                f"pytest plugin {distribution}, and the task's image does not have it. Declare {distribution} among "
                "the project's test dependencies (they are installed into the task's image), give an image that "
                "has it (--dockerfile), or say how to run the tests without it "
                "(--test-command 'python -m pytest -o addopts=\"\" tests')")
    return ()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# -- the layout ---------------------------------------------------------------------------------------
#: How packaging configurations say "the packages are under src/".
_DECLARED_SRC = re.compile(r"""package_dir\s*=\s*(?:\n\s*)?=\s*src\b|package_dir\s*=\s*\{\s*['"]{2}\s*:\s*['"]src['"]"""
                           r"""|where\s*=\s*\[?\s*['"]src['"]|packages\s*=\s*\[\s*['"]src/|from\s*=\s*['"]src['"]""")


def _src_layout(project: Tree) -> bool:
    """A package (or module) under src/, and no package at the top of the project, or the project's
    name is that of one under src/, or a packaging configuration says the packages are under src/."""
    under_src = {m[1] for p in project if (m := re.fullmatch(r"src/([A-Za-z_]\w*)(/__init__\.py|\.py)", p))}
    at_top = {m[1] for p in project if (m := re.fullmatch(r"([A-Za-z_]\w*)/__init__\.py", p))} - {"tests", "test", "docs"}
    if not under_src or not at_top:
        return bool(under_src)
    # The project's own name says which is the project (pydicom's src/pydicom beside its benchmarks/).
    own = re.sub(r"[-.]", "_", project_name(project)).lower()
    if own and not at_top & under_src and own in {*under_src, *at_top}:
        return own in under_src
    texts = (project[p].data.decode("utf-8", "replace") for p in ("setup.cfg", "setup.py", "pyproject.toml")
             if p in project and not project[p].link)
    return any(_DECLARED_SRC.search(text) for text in texts)


def _test_modules(project: Tree) -> list[str]:
    return sorted(p for p in project if is_test_module(p))


def _unittest_only(project: Tree) -> bool:
    """Tests written for unittest alone: no conftest.py, and no test module mentions pytest."""
    if any(posixpath.basename(p) == "conftest.py" for p in project):
        return False
    modules = _test_modules(project)
    texts = [project[p].data.decode("utf-8", errors="replace") for p in modules]
    return bool(texts) and all("unittest" in t and "pytest" not in t for t in texts)


def read_project_tests(project: Tree, *, installed: Collection[str] | None = (),
                       pytest_ids: bool = False) -> ProjectTests:
    """How `project` (a tree, as a fixture holds it) runs its tests.

    `installed`: distributions the task's image installs (its declared dependencies),
    which may provide the plugins the configuration needs; None when that is not known (an
    image of the author's own, which is trusted to hold them). Raises UserError when the
    configuration needs a plugin the image lacks, or does not parse. `pytest_ids`: the tests are
    named by pytest node ids (a SWE-bench instance: its harness runs pytest), so pytest runs them
    even where the project's tests are written for unittest alone.
    """
    config = _pytest_config(project)
    if config is None and not pytest_ids and _unittest_only(project):
        top = {p.split("/", 1)[0] for p in _test_modules(project) if "/" in p}
        package = all(f"{folder}/__init__.py" in project for folder in top)
        paths = ("src",) if _src_layout(project) else ()
        named_first = any(posixpath.basename(p).startswith("test") for p in _test_modules(project))
        return ProjectTests("unittest", paths + (() if package else tuple(sorted(top))), package_tests=package,
                            pattern="test*.py" if named_first else "*_test.py")
    name, options = config or ("", {})
    declared = [p.strip("/") or "." for p in _words(options.get("pythonpath"))]
    paths = ("src",) if _src_layout(project) and "src" not in declared else ()
    plugins = _plugins(name, _words(options.get("addopts")), installed, project) if name and installed is not None else ()
    return ProjectTests("pytest", paths, name, plugins)


# -- the command ----------------------------------------------------------------------------------------
def _unittest_name(target: str, tests: ProjectTests) -> str:
    """A pytest-style target (`tests/test_x.py::Class::test_y`, a folder, a module) as unittest names it."""
    path, _, rest = target.partition("::")
    module = path.removesuffix(".py").strip("/")
    if not tests.package_tests and "/" in module:
        module = module.split("/", 1)[1]
    return ".".join([module.replace("/", "."), *filter(None, rest.split("::"))])


def test_command(tests: ProjectTests, targets: Sequence[str]) -> str:
    """The command line that runs `targets` (pytest node ids, files or folders) the project's way."""
    env = f"PYTHONPATH={':'.join(tests.import_paths)} " if tests.import_paths else ""
    if tests.runner == "unittest":
        folders = [t for t in targets if "::" not in t and not t.endswith(".py")]
        if folders and len(targets) == 1:
            top = ["-t", "."] if tests.package_tests else []
            pattern = [] if tests.pattern == "test*.py" else ["-p", tests.pattern]
            return env + "python -m unittest discover " + shlex.join(["-s", folders[0], *top, *pattern])
        if folders:
            raise UserError(f"unittest runs one folder of tests at a time, not {', '.join(folders)}: "
                            "give --test-command")
        return env + "python -m unittest " + shlex.join(_unittest_name(t, tests) for t in targets)
    plugins = [word for module in tests.plugins for word in ("-p", module)]
    return env + "python -m pytest -q " + shlex.join([*plugins, *targets])


def project_test_command(project: Tree, targets: Sequence[str], *, installed: Collection[str] | None = (),
                         override: str | None = None, pytest_ids: bool = False) -> str:
    """The test command (with its environment) that runs `targets` of `project` the way the project
    does: what task.toml's test graders hold. `override` (the author's --test-command, with the
    targets appended) wins over anything read from the project."""
    if override:
        return override + (" " + shlex.join(targets) if targets else "")
    return test_command(read_project_tests(project, installed=installed, pytest_ids=pytest_ids), targets)


def unknown_option_error(command: str, output: str) -> UserError | None:
    """The error to give when pytest refused an option (a plugin's, with the plugin absent)."""
    found = re.search(r"unrecognized arguments: (\S+)", output)
    if not found:
        return None
    option = found.group(1)
    plugin = next((d for prefix, (d, _) in PLUGIN_OPTIONS.items()
                   if option.split("=", 1)[0] == prefix or option.startswith(prefix + "-")), None)
    owner = f"the pytest plugin {plugin}" if plugin else "a pytest plugin"
    return UserError(f"`{command}` stops at `{option}`, an option of {owner} that the task's image does not load "
                     "(plugins load only when named). Declare the plugin among the project's test dependencies, "
                     "or give --test-command with `-p MODULE`, or without the option (`-o addopts=\"\"`)")


# -- the runners SWE-bench reads by their log, not pytest's ------------------------------------------
#: The repositories whose tests SWE-bench runs with their own program (its `log_parser` for them):
#: Django's tests/runtests.py, sympy's bin/test, and pytest's own tree, whose tests exercise the
#: pytest SWE-bench installs from it in place (the image's pytest would never run the fix). Every
#: other repository's are the image's pytest's.
SWEBENCH_RUNNERS = {"django/django": "django", "sympy/sympy": "sympy", "pytest-dev/pytest": "tree-pytest"}
#: How SWE-bench's evaluation script calls each (its `test_cmd`); its Django 1.9 ran without --parallel.
#: pytest's tree is imported from its `src` (the layout of every version SWE-bench holds, 4.4 on), where
#: SWE-bench's editable install finds it.
_RUNNER_COMMANDS = {
    "django": "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
    "sympy": "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose",
    "tree-pytest": "PYTHONPATH=src pytest -rA",
}
#: A Django id names its module and class: `name (module.Class)` (`name (module.Class.name)` from
#: Python 3.11 on); an id that is a test's docstring names neither.
_DJANGO_ID = re.compile(r"(?P<name>\w+) \((?P<where>[\w.]+)\)")


_NODE_ID = re.compile(r"[^\s:][^:]*\.py::\S.*")


def runner_ids(runner: str, ids: list[str]) -> str | None:
    """What is wrong with the dataset's ids for `runner` (None: nothing): pytest's are node ids; sympy's
    test function names; Django's what its runner prints before ` ... ok` (`name (module.Class)` or a
    docstring)."""
    if runner in ("pytest", "tree-pytest"):
        odd = next((i for i in ids if not _NODE_ID.fullmatch(i)), None)
        return f"holds {odd!r}, which is not a pytest node id (path/to/test_x.py::name)" if odd else None
    if runner == "sympy":
        odd = next((i for i in ids if not re.fullmatch(r"test\w*", i)), None)
        return f"holds {odd!r}, which is not a sympy test function's name (test_x)" if odd else None
    odd = next((i for i in ids if not i.strip() or "\n" in i), None)
    return f"holds {odd!r}, which is not a line Django's runner prints for a test" if odd is not None else None


def runner_args(runner: str, test_files: Sequence[str], ids: list[str], version: str = "") -> dict:
    """A test grader's arguments for `runner` (see `runner_command`): each id must be read passed in
    the runner's output, and the guards of pytest's process the runner goes without are stated."""
    return {"command": runner_command(runner, test_files, ids, version), "runner": runner, "tests": ids,
            "min_tests": len(ids), "unguarded": list(UNGUARDED[runner])}


def runner_command(runner: str, test_files: Sequence[str], ids: Sequence[str], version: str = "", *,
                   by_hand: bool = False) -> str:
    """The command SWE-bench's evaluation script runs for `runner` with the files its test patch
    leaves (`test_files`): sympy's bin/test and pytest's own over the Python files, Django's runtests.py
    over their modules (`tests/a/test_b.py` -> `a.test_b`). Where a Django test patch holds no Python file,
    SWE-bench runs the whole suite; here the modules its ids name, when every id names one.
    `by_hand`: as an agent types it in its sandbox, where the project is not installed (the
    harness puts it on the program's PYTHONPATH itself)."""
    base = _RUNNER_COMMANDS[runner]
    if by_hand:
        base = base.replace("./tests/runtests.py", "python3 tests/runtests.py").replace(
            "bin/test", "python3 bin/test").replace("pytest -rA", "python3 -m pytest -rA")
        base = base if base.startswith("PYTHONPATH=") else "PYTHONPATH=. " + base
    if runner == "django" and version == "1.9":
        base = base.replace(" --parallel 1", "")
    files = [f for f in test_files if f.endswith(".py")]
    if runner != "django":
        return f"{base} {shlex.join(files)}".rstrip()
    labels = [f.removesuffix(".py").removeprefix("tests/").replace("/", ".") for f in files]
    if not labels:
        named = [_DJANGO_ID.fullmatch(i) for i in ids]
        if named and all(named):
            labels = list(dict.fromkeys(m["where"].rsplit(".", 2 if m["where"].endswith("." + m["name"]) else 1)[0]
                                        for m in named))
    return f"{base} {shlex.join(labels)}".rstrip()
