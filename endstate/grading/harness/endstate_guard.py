"""endstate's guard for a graded test run (runs inside the grading sandbox).

Code of the end state runs inside the test process: the package under test is
imported by the tests. This module notices the usual ways such code rewrites
what the test runner reports:

- `snapshot()`, called by the entry point before any file of the workspace can be
  imported, records the identity (and code object) of every function, method and
  class attribute of the test runner's own modules (pytest, _pytest, pluggy,
  unittest, doctest, builtins), plus the import machinery (sys.meta_path,
  sys.path_hooks). `findings()`, called after the run has finished, names each of
  them that was replaced, removed, or had its code swapped, and a trace or profile
  function left installed.
- As a pytest plugin, it lists at the end of the session every plugin that was
  registered; one that does not come from pytest itself, from this guard, or from a
  conftest.py of the fixture is a finding (a `pytest_plugins = [...]` line in a
  test file, or `config.pluginmanager.register(...)` from project code).
- A plugin the image installs is the project's as long as nothing of the end state
  enabled it: one registered while changed workspace code runs, or named by an added or
  changed test module's `pytest_plugins`, is a finding. What such a plugin's own hook
  does to the runner's modules while pytest calls it (pytest-doctestplus replaces
  `doctest.OutputChecker` where the project's configuration enables it) is the
  project's too: each assignment to a watched module is attributed when it is made.

What it cannot do is stop code that knows it is here and works around it; the
harness's canary test (a test that must fail) is the second line, and the README
says plainly what remains possible.
"""

import hashlib
import os
import sys
import types

try:
    from pluggy import HookimplMarker

    hookimpl = HookimplMarker("pytest")
except ImportError:  # an image with unittest only: this module is then never a pytest plugin
    def hookimpl(**_options):  # noqa: ANN001, ANN202
        return lambda function: function

_WATCHED_ROOTS = ("_pytest", "pytest", "pluggy", "unittest", "doctest", "builtins", "iniconfig")
_ALLOWED_PLUGIN_ROOTS = ("_pytest", "pytest", "pluggy", __name__)
_ATTRIBUTE_KINDS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, staticmethod, classmethod,
                    property, type)

_snapshot: "dict | None" = None
_plugins_seen: "list[tuple[str, str]]" = []
#: (module, attribute) -> the value an image plugin's own hook assigned there.
_assigned_by_image_plugin: "dict[tuple[str, str], object]" = {}
#: The image's plugins the end state enabled (`id`s): never trusted, whatever their file.
_enabled_by_end_state: "set[int]" = set()
#: Set by the entry point: the workspace, and the workspace paths the agent added or
#: changed (None: unknown, so no workspace file is trusted beyond fixture conftests).
workspace = "/workspace"
changed: "set[str] | None" = None


def _trusted_file(filename: str) -> bool:
    """A workspace file the agent did not touch: the fixture's own code, the held-out tests.
    What such code does to the runner is the project's, not the agent's."""
    if changed is None or not filename.startswith(workspace + "/"):
        return False
    return filename[len(workspace) + 1:] not in changed and os.path.isfile(filename)


def _image_dirs() -> "tuple[str, ...]":
    """Where the image's own packages live (the task's installed dependencies among them):
    root's folders, which nothing of the end state can write."""
    import site
    import sysconfig

    found = set(site.getsitepackages()) | {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    return tuple(sorted(os.path.abspath(d) + "/" for d in found if d and os.path.isabs(d)))


def _image_file(filename: str) -> bool:
    """A file of an installed dependency: what it does at import (an import hook, say) is the
    image's, not the agent's."""
    dirs = _snapshot.get("image_dirs", ()) if _snapshot else ()
    return bool(filename) and filename.startswith(dirs) and not filename.startswith(workspace + "/")


def _origin_file(obj: object) -> str:
    module = obj if isinstance(obj, types.ModuleType) else sys.modules.get(_origin(obj))
    filename = getattr(module, "__file__", None) if isinstance(module, types.ModuleType) else None
    return os.path.abspath(filename) if isinstance(filename, str) else ""


def _code_of(value: object) -> object:
    target = getattr(value, "__func__", value)
    if isinstance(value, property):
        target = value.fget
    return getattr(target, "__code__", None)


def _members(module: types.ModuleType) -> "dict[str, tuple[object, object]]":
    members: dict[str, tuple[object, object]] = {}
    name = module.__name__
    for attr, value in list(vars(module).items()):
        if not isinstance(value, _ATTRIBUTE_KINDS):
            continue
        members[attr] = (value, _code_of(value))
        if isinstance(value, type) and getattr(value, "__module__", None) == name:
            for class_attr, class_value in list(vars(value).items()):
                if isinstance(class_value, _ATTRIBUTE_KINDS):
                    members[f"{attr}.{class_attr}"] = (class_value, _code_of(class_value))
    return members


class _WatchedModule(types.ModuleType):
    """A runner module whose attribute assignments are attributed as they are made: a write to its
    `__dict__` directly bypasses this, and is then a replacement like any other."""

    def __setattr__(self, attr: str, value: object) -> None:
        if _image_plugin_assigns(sys._getframe(1)):
            _assigned_by_image_plugin[(self.__name__, attr)] = value
        else:
            _assigned_by_image_plugin.pop((self.__name__, attr), None)
        super().__setattr__(attr, value)


def _frame_file(frame: "types.FrameType") -> str:
    return os.path.abspath(frame.f_code.co_filename)


def _end_state_file(filename: str) -> bool:
    """A file of the workspace the agent added or changed (any, when what changed is unknown)."""
    filename = os.path.abspath(filename)
    return filename.startswith(workspace + "/") and not _trusted_file(filename)


def _image_plugin_assigns(frame: "types.FrameType") -> bool:
    """Whether an assignment made in `frame` is an image plugin's own hook at work: every frame from it
    out to pluggy's hook call is code the image installs (not pytest's or pluggy's own: their monkeypatch
    takes a value from anyone), the hook called is of a plugin of the image the end state did not
    enable, and nothing of the end state is on the stack (`_enabled_from_end_state`)."""
    homes = [_origin_file(sys.modules[name]) for name in ("pluggy", "_pytest", "pytest") if name in sys.modules]
    if len(homes) < 3 or not all(h.endswith("/__init__.py") for h in homes):
        return False
    pluggy_home, *pytest_homes = (os.path.dirname(h) + "/" for h in homes)
    current: "types.FrameType | None" = frame
    while current is not None and not _frame_file(current).startswith(pluggy_home):
        if not _image_file(_frame_file(current)) or _frame_file(current).startswith(tuple(pytest_homes)):
            return False
        current = current.f_back
    if current is None or current is frame:
        return False
    plugin = getattr(current.f_locals.get("hook_impl"), "plugin", None)  # pluggy's `_multicall` loop
    return plugin is not None and _image_file(_origin_file(plugin)) and id(plugin) not in _enabled_by_end_state \
        and not _enabled_from_end_state(current)


def _enabled_from_end_state(frame: "types.FrameType | None") -> bool:
    """Whether a plugin being registered now is the end state's doing: code of the end state on the
    stack, or a test module of the end state whose `pytest_plugins` pytest is reading."""
    while frame is not None:
        if _end_state_file(frame.f_code.co_filename):
            return True
        declaring = frame.f_locals.get("mod") if frame.f_code.co_name == "consider_module" else None
        declared_in = getattr(declaring, "__file__", None) if isinstance(declaring, types.ModuleType) else None
        if isinstance(declared_in, str) and _end_state_file(declared_in):
            return True
        frame = frame.f_back
    return False


def pytest_plugin_registered(plugin) -> None:  # noqa: ANN001 - pytest's hook signature
    if _snapshot is None or not _image_file(_origin_file(plugin)) or _origin(plugin).split(".")[0] in \
            _ALLOWED_PLUGIN_ROOTS:
        return
    if _enabled_from_end_state(sys._getframe(1)):
        _enabled_by_end_state.add(id(plugin))


def _watched() -> "list[tuple[str, types.ModuleType]]":
    return [(name, module) for name, module in sorted(sys.modules.items())
            if isinstance(module, types.ModuleType) and name.split(".")[0] in _WATCHED_ROOTS]


def snapshot() -> None:
    """Record the runner's machinery now; call before any project code can run."""
    global _snapshot
    _snapshot = {
        "modules": {name: (module, _members(module)) for name, module in _watched()},
        "meta_path": list(sys.meta_path),
        "path_hooks": list(sys.path_hooks),
        "image_dirs": _image_dirs(),
    }
    for _, module in _watched():
        if type(module) is types.ModuleType:
            module.__class__ = _WatchedModule


def strict_should_stop() -> None:
    """unittest reads its `_ShouldStop` as "end this test quietly": its `subTest` raises it once a subtest
    failed under failfast, or an expected failure came. Raised by the code a test calls, it ended the
    test unfinished, and unittest (and pytest, which runs a TestCase through unittest) reported it passed.
    One raised anywhere but in `subTest` now fails the test, as any other exception would. Installed
    before the snapshot: the runner's own version is the one watched."""
    import contextlib
    import unittest.case as case

    outcome = getattr(case, "_Outcome", None)
    original = getattr(outcome, "testPartExecutor", None)
    if original is None or getattr(original, "endstate_strict", False):
        return

    @contextlib.contextmanager
    def testPartExecutor(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202, N802 - unittest's names
        with original(self, *args, **kwargs):
            try:
                yield
            except case._ShouldStop as stop:
                if not _raised_by_subtest(stop, case.__file__):
                    raise AssertionError("the code under test raised unittest's _ShouldStop, which ends a test "
                                         "unfinished and reports it passed") from None
                raise

    testPartExecutor.endstate_strict = True  # type: ignore[attr-defined]
    setattr(outcome, "testPartExecutor", testPartExecutor)


def _raised_by_subtest(stop: BaseException, case_file: str) -> bool:
    tb = stop.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code if tb is not None else None
    return code is not None and code.co_name == "subTest" and \
        os.path.abspath(code.co_filename) == os.path.abspath(case_file)


def _origin(obj: object) -> str:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return getattr(obj, "__module__", None) or type(obj).__module__


def findings() -> "list[str]":
    """What changed in the runner's machinery since `snapshot()` (empty when nothing did)."""
    if _snapshot is None:
        return ["the guard took no snapshot before the tests ran"]
    found: list[str] = []
    for name, (module, members) in _snapshot["modules"].items():
        if sys.modules.get(name) is not module:
            found.append(f"module {name} was replaced in sys.modules")
            continue
        now = _members(module)
        # What an image plugin's own hook put in place is the project's, and so are its own members.
        projects = tuple(attr for (owner, attr), put in _assigned_by_image_plugin.items()
                         if owner == name and now.get(attr, (None,))[0] is put)
        for attr, (value, code) in members.items():
            current = now.get(attr)
            if attr in projects or attr.startswith(tuple(p + "." for p in projects)):
                continue
            if current is None:
                found.append(f"{name}.{attr} was removed")
            elif current[0] is not value:
                if not _trusted_file(_code_file(current[1])):
                    found.append(f"{name}.{attr} was replaced")
            elif current[1] is not code:
                found.append(f"{name}.{attr} had its code swapped")
    for hook in sys.meta_path:
        if hook not in _snapshot["meta_path"] and not _origin(hook).startswith(("_pytest", "importlib", "_frozen")) \
                and not _trusted_file(_origin_file(hook)) and not _image_file(_origin_file(hook)):
            found.append(f"an import hook was installed: {type(hook).__name__} from {_origin(hook)}")
    for hook in sys.path_hooks:
        if hook not in _snapshot["path_hooks"] and not _trusted_file(_origin_file(hook)) \
                and not _image_file(_origin_file(hook)):
            found.append(f"a path hook was installed: {getattr(hook, '__name__', hook)!r} from {_origin(hook)}")
    if sys.gettrace() is not None:
        found.append("a trace function was left installed (sys.settrace)")
    if sys.getprofile() is not None:
        found.append("a profile function was left installed (sys.setprofile)")
    for plugin_name, origin in _plugins_seen:
        found.append(f"a pytest plugin not on the harness's allow-list was registered: {plugin_name} ({origin})")
    return found


def _code_file(code: object) -> str:
    filename = getattr(code, "co_filename", None) if isinstance(code, types.CodeType) else None
    return os.path.abspath(filename) if isinstance(filename, str) else ""


def _allowed_plugin(plugin: object) -> bool:
    origin = _origin(plugin)
    if origin.split(".")[0] in _ALLOWED_PLUGIN_ROOTS or origin == "endstate_guard":
        return True
    if _trusted_file(_origin_file(plugin)):  # the fixture's own plugin (e.g. `-p pkg.plugin` in its config)
        return True
    if _image_file(_origin_file(plugin)):  # a plugin the task's image installs (`-p pytest_cov`), unless
        return id(plugin) not in _enabled_by_end_state  # the end state enabled it
    path = getattr(plugin, "__file__", None) or ""
    # A conftest.py is loaded as a plugin; the harness refuses any the agent added or changed.
    return isinstance(plugin, types.ModuleType) and path.startswith(workspace + "/") and \
        path.rsplit("/", 1)[-1] == "conftest.py"


def _pytest_home() -> str:
    import _pytest

    return os.path.dirname(os.path.dirname(os.path.abspath(_pytest.__file__))) + "/"


def _code_home_allowed(filename: str, pytest_home: str) -> bool:
    here = os.path.abspath(__file__)
    return (filename.startswith(pytest_home) or filename == here or _trusted_file(filename) or _image_file(filename)
            or (filename.startswith(workspace + "/") and filename.rsplit("/", 1)[-1] == "conftest.py"))


#: Each test's outcome as the test process itself reported it (nodeid -> outcome), kept in
#: memory: the harness compares the written report with it.
observed: "dict[str, str]" = {}
_RANK = {"passed": 0, "skipped": 1, "failure": 2, "error": 3}


def _observe(nodeid: str, outcome: str) -> None:
    if _RANK[outcome] >= _RANK.get(observed.get(nodeid, "passed"), 0):
        observed[nodeid] = outcome


#: Per reported case, named as the JUnit report names it ("classname::name"): its file, relative
#: to the workspace. One run can hold two graders' tests; this tells the harness whose each is.
files: "dict[str, str]" = {}
_junit_names: list = []


def pytest_configure(config) -> None:  # noqa: ANN001
    from _pytest.junitxml import mangle_test_address

    root = getattr(config, "rootpath", None) or config.rootdir  # rootpath is pytest 6.1's
    _junit_names[:] = [mangle_test_address, getattr(config.option, "junitprefix", None), str(root)]


def _place(nodeid: str) -> None:
    if not _junit_names or not nodeid:
        return
    mangle, prefix, root = _junit_names
    names = mangle(nodeid)
    if prefix:
        names[0] = f"{prefix}.{names[0]}"
    files[".".join(names[:-1]) + "::" + names[-1]] = os.path.relpath(os.path.join(root, nodeid.split("::")[0]), workspace)


def pytest_runtest_logreport(report) -> None:  # noqa: ANN001
    _place(report.nodeid)
    if report.when == "teardown":
        _began[report.nodeid] = True
    if report.when == "call":
        outcome = "failure" if report.failed else "skipped" if report.skipped else "passed"
    else:  # setup and teardown: a failure there is an error, a skip in setup a skip
        outcome = "error" if report.failed else "skipped" if report.skipped else "passed"
    _observe(report.nodeid, outcome)


def pytest_collectreport(report) -> None:  # noqa: ANN001
    # The report writer lists a collector that failed or skipped as a test case of its own.
    if report.failed or report.skipped:
        _place(report.nodeid)
    if report.failed:
        _observe(report.nodeid or "<collection>", "error")
    elif report.skipped:
        _observe(report.nodeid or "<collection>", "skipped")


#: Per test that began its run (nodeid): whether its teardown was reported, that is, whether it ended.
_began: "dict[str, bool]" = {}
#: The tests the session was to run, as collection left them.
_collected: "list[str]" = []
_interrupted: list = []


def pytest_collection_finish(session) -> None:  # noqa: ANN001
    _collected[:] = [getattr(item, "nodeid", "") for item in getattr(session, "items", None) or []]


def pytest_runtest_logstart(nodeid, location) -> None:  # noqa: ANN001
    _began.setdefault(nodeid, False)


def pytest_keyboard_interrupt(excinfo) -> None:  # noqa: ANN001 - pytest.exit() comes here too
    _interrupted.append(True)


def _unfinished(session) -> None:  # noqa: ANN001
    """Count as errors the tests the session did not run to their end: one it ended inside (pytest.exit
    or an interrupt raised by the code a test called, in its call or a fixture), and, where nothing
    stopped it (no interrupt, no -x or --stepwise of pytest's own), one it was to run and never began
    (taken out of the session's list after collection). Either never failed, and its twin went the
    same way in the other half; the run must not read as if they passed, or as if they were never there."""
    for nodeid, ended in _began.items():
        if not ended:
            _observe(nodeid, "error")
    if _interrupted or getattr(session, "shouldstop", False) or getattr(session, "shouldfail", False):
        return
    for nodeid in _collected:
        if nodeid not in _began:
            _observe(nodeid, "error")


def tally() -> "dict[str, object]":
    """Counts of what the process observed, by test name (the last part of its id)."""
    outcomes = list(observed.items())
    return {
        "tests": len(outcomes),
        "failures": sum(1 for _, o in outcomes if o == "failure"),
        "errors": sum(1 for _, o in outcomes if o == "error"),
        "skipped": sum(1 for _, o in outcomes if o == "skipped"),
        "by_name": {nodeid.rsplit("::", 1)[-1]: outcome for nodeid, outcome in outcomes},
        "files": files,
    }


#: sha256 of the report as pytest wrote it, taken right after its writer ran.
report_digest: "str | None" = None
report_path = ""


@hookimpl(trylast=True)
def pytest_sessionfinish(session) -> None:  # noqa: ANN001 - pytest's hook signature
    global report_digest
    _unfinished(session)
    manager = session.config.pluginmanager
    for plugin in manager.get_plugins():
        if plugin is None or _allowed_plugin(plugin):
            continue
        _plugins_seen.append((manager.get_name(plugin) or repr(plugin), _origin(plugin)))
    # Every hook implementation must be pytest's own, this guard's or a fixture conftest's:
    # a plugin can lie about its module name, its code's home is harder to fake.
    home = _pytest_home()
    for name in dir(manager.hook):
        caller = getattr(manager.hook, name, None)
        get_impls = getattr(caller, "get_hookimpls", None)
        if get_impls is None:
            continue
        for impl in get_impls():
            code = getattr(getattr(impl, "function", None), "__code__", None)
            if code is not None and not _code_home_allowed(os.path.abspath(code.co_filename), home):
                _plugins_seen.append((f"hook {name}", code.co_filename))
    if report_path and os.path.exists(report_path):
        with open(report_path, "rb") as report:
            report_digest = hashlib.sha256(report.read()).hexdigest()
