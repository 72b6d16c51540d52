"""endstate's own entry point for a graded test run (runs inside the grading sandbox).

The harness runs it as

    python3 -s -B /opt/endstate/harness/endstate_runner.py RUNNER REPORT_DIR NONCE GUARD WORKSPACE PATHS -- ARGS...

with RUNNER `pytest`, `unittest` or `program`, WORKSPACE the folder the tests run in (a scratch
copy of the graded tree), PATHS the task's own import folders (`src`, ":"-separated,
relative to WORKSPACE; "" for none: what a project's PYTHONPATH says) and ARGS the
task's own arguments for the runner. It imports the test runner (and the guard) before
the workspace or any of its folders joins sys.path, so no file of the end state
(`pytest.py`, `_pytest/`, `unittest/`, a `.pyc`) can stand in for them; then puts the
workspace first on sys.path, the way `python -m pytest` puts the working directory,
and the task's folders right after it, the way PYTHONPATH would, and runs. The report is written to REPORT_DIR/NONCE/
as report.xml (JUnit XML, from pytest's own writer or from the recorder below), the
guard's findings as guard.json once the run has finished. RUNNER `program` runs a project's
own test program (ARGS: its path in the workspace, then its arguments: Django's
tests/runtests.py, sympy's bin/test) under this interpreter, with no guard, the workspace and
the task's folders as its PYTHONPATH, and writes what it prints to REPORT_DIR/NONCE/output.log.

    python3 -s -B /opt/endstate/harness/endstate_runner.py --serve FOLDER

is the same entry point kept warm (see `serve`): started as root in a grading sandbox
once its probe has run, it imports what a pytest run imports before the workspace
joins sys.path, then forks one child per run, which becomes the test user and runs
`main` exactly as a fresh process would (endstate_connect.py asks for it).
"""

import hashlib
import importlib
import json
import os
import sys

HARNESS = os.path.dirname(os.path.abspath(__file__))
#: What the unittest recorder observed, for the guard's report.
_unittest_tally = {}
WORKSPACE = "/workspace"
#: Folders of the workspace the project imports from (its PYTHONPATH), set by main().
_paths = []


def _join_workspace():
    """The workspace, then the task's own import folders, at the front of sys.path; a Python the
    tests start (click's import test runs `sys.executable -c "import click"`, pylint's runs `python -m
    pylint` in a scratch folder) is given those folders, or the workspace where there are none, as its
    PYTHONPATH, as the project's own environment gives it its installed package."""
    folders = [os.path.join(WORKSPACE, p) for p in _paths]
    sys.path[0:0] = [WORKSPACE] + folders
    os.environ["PYTHONPATH"] = os.pathsep.join(folders or [WORKSPACE])


def _imported_guard(enabled):
    if not enabled:
        return None
    sys.path.insert(0, HARNESS)
    try:
        import endstate_guard
    finally:
        sys.path.remove(HARNESS)
    endstate_guard.workspace = WORKSPACE
    try:  # what the agent added or changed, written by the harness at staging
        with open(os.path.join(HARNESS, "changed.json"), encoding="utf-8") as listing:
            endstate_guard.changed = set(json.load(listing))
    except (OSError, ValueError):
        endstate_guard.changed = None
    return endstate_guard


def _imported_isolation():
    sys.path.insert(0, HARNESS)
    try:
        import endstate_isolate
    finally:
        sys.path.remove(HARNESS)
    return endstate_isolate


def _without_harness_path():
    # The script's own folder is sys.path[0] when run as a file: nothing there may be imported later.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HARNESS]


def _import_pytest():
    """pytest, its default plugins and the image's own pytest plugins, imported from the image
    (nothing of the workspace is on sys.path yet); returns (pytest, the image's plugins)."""
    import pytest
    from _pytest import config as pytest_config

    for name in pytest_config.default_plugins:
        try:
            importlib.import_module("_pytest." + name)
        except ImportError:
            pass
    if _autoloads(pytest):
        # It loads the plugins itself, through pkg_resources: imported now, its working set is the image's
        # folders' alone (a distribution of the end state is never loaded), and the import hook its vendored
        # six installs is in place before the guard's snapshot.
        try:
            import pkg_resources  # type: ignore[import-untyped]  # noqa: F401
        except ImportError:
            pass
    return pytest, _image_plugins()


def _autoloads(pytest):
    """Whether this pytest loads the `pytest11` entry points whatever the environment says
    (PYTEST_DISABLE_PLUGIN_AUTOLOAD is 3.7's; SWE-bench's astropy 1.3 environment pins 3.3.1)."""
    try:
        major, minor = (int(part) for part in pytest.__version__.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) < (3, 7)


def _image_plugins():
    """(entry point name, plugin, distribution) of every pytest plugin the image installs: what
    pytest would load by itself (its `pytest11` entry points). Taken while sys.path holds the
    image's folders alone, so a distribution of the end state (a `.dist-info` in the tree) never
    adds one; the task's image is built before the agent runs and is root's."""
    try:
        from importlib import metadata
    except ImportError:  # Python before 3.8 (SWE-bench's 3.5-3.7 envs): pytest depends on the backport there
        import importlib_metadata as metadata

    found, names = [], set()
    for dist in metadata.distributions():
        where = os.path.abspath(str(getattr(dist, "_path", "") or "/"))
        if where == WORKSPACE or where.startswith(WORKSPACE + "/"):
            continue
        for entry in dist.entry_points:
            if entry.group != "pytest11" or entry.name in names:
                continue
            names.add(entry.name)
            try:
                plugin = entry.load()
            except ImportError as exc:
                if not _of_the_workspace(exc):
                    raise
                plugin = _LoadedLater(entry)
            found.append((entry.name, plugin, dist))
    return found


class _LoadedLater:
    """An image plugin whose module imports the project under test (pytest-astropy-header 0.1 imports
    astropy): in the project's own environment pytest loads it with the project importable, so it is
    loaded once the workspace is on sys.path, when the image's other plugins are registered. Where its
    top-level module is found now, from the image's folders alone, is kept: loaded later, it must be
    the same one, never a module of the same name the workspace holds."""

    def __init__(self, entry):
        self.entry = entry
        self.top = entry.value.split(":", 1)[0].strip().split(".")[0]
        self.where = _found_at(self.top)

    def load(self):
        plugin = self.entry.load()
        module = sys.modules.get(self.top)
        now = getattr(module, "__spec__", None)
        if now is None or (now.origin, list(now.submodule_search_locations or [])) != self.where:
            raise ImportError("the image's pytest plugin %s (%s) was shadowed by a module of the workspace"
                              % (self.entry.name, self.top), name=self.top)
        return plugin


def _found_at(top):
    """Where the import system finds the module `top` on sys.path as it stands: (origin, search locations)."""
    import importlib.machinery

    spec = importlib.machinery.PathFinder.find_spec(top, sys.path)
    return (spec.origin, list(spec.submodule_search_locations or [])) if spec is not None else (None, [])


def _of_the_workspace(exc):
    """Whether an image plugin failed to import for want of a module the workspace holds (the
    project itself), as opposed to one that is nowhere, which fails the run as it always did."""
    root = (getattr(exc, "name", None) or "").split(".")[0]
    if not root:
        return False
    for folder in [WORKSPACE] + [os.path.join(WORKSPACE, p) for p in _paths]:
        if os.path.isfile(os.path.join(folder, root, "__init__.py")) or os.path.isfile(os.path.join(folder, root + ".py")):
            return True
    return False


class _DistFacade:
    """An importlib distribution as a pluggy before 0.13 reads one (pkg_resources' `project_name`)."""

    def __init__(self, dist):
        self._dist = dist

    @property
    def project_name(self):
        return self._dist.metadata["name"]

    def __getattr__(self, attr):
        return getattr(self._dist, attr)


def _plugin_loader(pytest, plugins, args):
    """A plugin that registers the image's plugins the way pytest's autoload does (by entry point
    name, with their distribution), once the command line's `-p no:NAME` is known and before the
    configuration's is read (which unregisters what it blocks), then takes itself out. One whose
    module imports the project waits for the point where pytest autoloads (the configuration's
    `-p no:NAME` known too), so a plugin blocked there never imports the project."""
    named = {args[i + 1] for i in range(len(args) - 1) if args[i] == "-p"}
    try:
        from pluggy._manager import DistFacade
    except ImportError:  # pluggy before 1.1
        try:
            from pluggy.manager import DistFacade
        except ImportError:  # before 0.13 (pytest 3's): it keeps pkg_resources' distributions, read by project_name
            DistFacade = _DistFacade

    def register(pluginmanager, name, plugin, dist):
        if pluginmanager.is_blocked(name) or pluginmanager.get_plugin(name) is not None:
            return
        if isinstance(plugin, _LoadedLater):  # the workspace is on sys.path now; a failure is the end state's
            plugin = plugin.load()
        if pluginmanager.is_registered(plugin) or getattr(plugin, "__name__", None) in named:
            return
        pluginmanager.register(plugin, name=name)
        pluginmanager._plugin_distinfo.append((plugin, DistFacade(dist)))

    class ImagePlugins:
        @pytest.hookimpl(tryfirst=True)
        def pytest_cmdline_parse(self, pluginmanager, args):
            later = [entry for entry in plugins if isinstance(entry[1], _LoadedLater)]
            if not later:
                pluginmanager.unregister(self)
            elif _autoloads(pytest):
                # This pytest imports them itself, by name, before the hook below: imported here first (the
                # image's module, checked), the one it finds in sys.modules is that one.
                for _, plugin, _ in later:
                    plugin.load()
            for name, plugin, dist in plugins:
                if not isinstance(plugin, _LoadedLater):
                    register(pluginmanager, name, plugin, dist)

        @pytest.hookimpl(tryfirst=True)
        def pytest_load_initial_conftests(self, early_config):
            pluginmanager = early_config.pluginmanager
            pluginmanager.unregister(self)
            for name, plugin, dist in plugins:
                if isinstance(plugin, _LoadedLater):
                    register(pluginmanager, name, plugin, dist)

    return ImagePlugins()


def _run_pytest(report, guard, args):
    pytest, plugins = _import_pytest()
    if guard is not None:
        guard.strict_should_stop()
        guard.snapshot()
    _join_workspace()
    full = list(args) + ["-p", "no:cacheprovider", "--junitxml=" + report, "-o", "junit_family=xunit2",
                         "--confcutdir=" + WORKSPACE]
    extra = [guard] if guard is not None else []
    if plugins:
        extra.append(_plugin_loader(pytest, plugins, full))
    return pytest.main(full, plugins=extra)


def _run_unittest(report, guard, args):
    import doctest  # noqa: F401 - imported before the workspace can shadow it
    import unittest
    from xml.sax.saxutils import quoteattr

    if guard is not None:
        guard.strict_should_stop()
        guard.snapshot()
    _join_workspace()

    cases = []
    _unittest_tally.clear()

    class Recorder(unittest.TextTestResult):
        def _add(self, test, outcome, detail=""):
            cases.append((test.id(), outcome, detail))

        def addSuccess(self, test):
            super().addSuccess(test)
            self._add(test, "passed")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._add(test, "failure", self._exc_info_to_string(err, test))

        def addError(self, test, err):
            super().addError(test, err)
            self._add(test, "error", self._exc_info_to_string(err, test))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._add(test, "skipped", reason)

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            self._add(test, "skipped", "expected failure")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._add(test, "failure", "unexpected success")

    runner = unittest.TextTestRunner(resultclass=Recorder, verbosity=1)
    program = unittest.main(module=None, argv=["python -m unittest"] + list(args), testRunner=runner, exit=False)
    result = program.result
    counts = {"tests": len(cases), "failures": sum(1 for c in cases if c[1] == "failure"),
              "errors": sum(1 for c in cases if c[1] == "error"),
              "skipped": sum(1 for c in cases if c[1] == "skipped")}
    _unittest_tally.update(counts, by_name={c[0].rpartition(".")[2]: c[1] for c in cases})
    lines = ['<testsuites><testsuite name="unittest" ' +
             " ".join(f'{k}="{v}"' for k, v in counts.items()) + ">"]
    for test_id, outcome, detail in cases:
        classname, _, name = test_id.rpartition(".")
        body = "" if outcome == "passed" else f"<{outcome} message={quoteattr(detail[-2000:])}/>"
        lines.append(f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}>{body}</testcase>")
    lines.append("</testsuite></testsuites>")
    with open(report, "w", encoding="utf-8") as out:
        out.write("\n".join(lines))
    if not cases:
        return 5
    return 0 if result.wasSuccessful() else 1


def _run_program(folder, args):
    import subprocess

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([WORKSPACE] + [os.path.join(WORKSPACE, p) for p in _paths]))
    with open(os.path.join(folder, "output.log"), "wb") as log:
        # A script (Django's tests/runtests.py, sympy's bin/test) through `program`; a module (`-m pytest`, the
        # tree's own) as it is.
        boot = [] if args[0].startswith("-") else [os.path.join(HARNESS, "endstate_runner.py"), "--program"]
        return subprocess.call([sys.executable, *boot, *args], stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT, env=env, cwd=WORKSPACE)


def program(script, args):
    """The project's own test script (`python SCRIPT ARGS`, as `_run_program` is asked to run it), with
    unittest's quiet stop kept for unittest itself first (`endstate_guard.strict_should_stop`): Django's
    runner is unittest's, and a test the code under test ended with it read `ok`. The script runs as
    its own file would: `__main__`, its folder first on sys.path, its argv."""
    import runpy

    _without_harness_path()
    sys.path.insert(0, HARNESS)
    try:
        import endstate_guard
    finally:
        sys.path.remove(HARNESS)
    endstate_guard.strict_should_stop()
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


def main(argv):
    global WORKSPACE
    runner, report_dir, nonce, guard_flag, workspace, paths, separator, *args = argv
    if separator != "--" or not os.path.isabs(workspace):
        print("endstate_runner: usage: RUNNER REPORT_DIR NONCE GUARD WORKSPACE PATHS -- ARGS...", file=sys.stderr)
        return 64
    WORKSPACE = workspace
    _paths[:] = [p for p in paths.split(":") if p]
    if any(os.path.isabs(p) or ".." in p.split("/") for p in _paths):
        print(f"endstate_runner: import folders must lie inside the workspace: {paths!r}", file=sys.stderr)
        return 64
    sys.dont_write_bytecode = True
    _without_harness_path()
    guard = _imported_guard(guard_flag == "guard")
    # Taken now, so a patched copy of the guard cannot answer for it later.
    findings = guard.findings if guard is not None else None
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        os.environ.pop(name, None)
    folder = os.path.join(report_dir, nonce)
    if not os.path.isdir(folder):  # an isolated run's is made by the harness, to be carried into its namespaces
        os.mkdir(folder)
    report = os.path.join(folder, "report.xml")
    if guard is not None:
        guard.report_path = report
    os.chdir(WORKSPACE)
    # The harness's own imports are done: the tests run as the project's own runs do, writing
    # bytecode (pytest's own tests read the caches its rewriter writes). What they write stays in
    # this run's scratch copy, and no cache of the end state is ever graded (sandbox/_sealed.py).
    sys.dont_write_bytecode = False
    if runner == "pytest":
        code = _run_pytest(report, guard, args)
    elif runner == "unittest":
        code = _run_unittest(report, guard, args)
    elif runner == "program" and guard is None and args:
        code = _run_program(folder, args)
    else:
        print(f"endstate_runner: unknown runner {runner!r}", file=sys.stderr)
        return 64
    if findings is not None:
        found = findings()
        now = None
        if os.path.exists(report):
            with open(report, "rb") as written:
                now = hashlib.sha256(written.read()).hexdigest()
        if guard.report_digest is not None and now != guard.report_digest:
            found.append("the report was rewritten after pytest wrote it")
        observed = guard.tally() if runner == "pytest" else _unittest_tally
        with open(os.path.join(folder, "guard.json"), "w", encoding="utf-8") as out:
            json.dump({"findings": found, "report_sha256": guard.report_digest, "observed": observed}, out)
    return int(code)


# -- kept warm: one root process that forks a run per request ---------------------------------
#
# Only what `main` imports before the workspace joins sys.path is imported here (the guard,
# pytest and its default plugins), as root, from the image's own folders: no file of the end
# state is on sys.path. Each request is one connection on FOLDER/sock: a length-prefixed JSON
# request with the caller's stdin, stdout and stderr attached. It is honoured only if it
# carries the token the harness wrote (as root, in a folder of root's alone) into FOLDER/key/token
# just before this run, and the token is used up at once: code of the end state only ever
# runs after its own run's request was accepted, so it can start no run of its own, in this
# run or a later one. The answer is b"R" (accepted) then the run's exit status, or b"N".


def serve(folder):
    import socket

    sys.dont_write_bytecode = True
    _without_harness_path()
    try:
        _imported_guard(True)
        isolation = _imported_isolation()
        _import_pytest()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        staged, path = os.path.join(folder, "sock.new"), os.path.join(folder, "sock")
        listener.bind(staged)
        os.chmod(staged, 0o666)
        listener.listen(8)
        os.rename(staged, path)  # callers wait for this name: it answers from the first moment it exists
    except BaseException:
        open(os.path.join(folder, "failed"), "w").close()  # callers stop waiting and run by themselves
        raise
    import gc

    getattr(gc, "freeze", lambda: None)()  # what is here now stays out of every child's collections (3.7+)
    sys.stdout.flush()
    sys.stderr.flush()
    while True:
        conn, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            status = 1
            try:
                status = _serve_one(conn, folder, isolation)
            finally:
                os._exit(status)
        conn.close()
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def _serve_one(conn, folder, isolation):
    import hmac
    import socket
    import struct

    conn.settimeout(10)
    _, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    data, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_LEN(3 * 4))  # socket.recv_fds is 3.9's
    fds = [fd for level, kind, raw in ancillary if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS)
           for fd in struct.unpack("%di" % (len(raw) // 4), raw[:len(raw) // 4 * 4])]
    while len(data) >= 4 and len(data) < 4 + int.from_bytes(data[:4], "big"):
        more = conn.recv(1 << 16)
        if not more:
            break
        data += more
    token_file, own_file = os.path.join(folder, "key", "token"), os.path.join(folder, "key", "isolate")
    try:
        with open(token_file, "rb") as held:
            expected = held.read()
        os.unlink(token_file)
    except OSError:
        expected = b""
    try:  # the folders an isolated run carries into its namespaces; no file: a run without them
        with open(own_file, encoding="utf-8") as held:
            own = held.read().split("\n")
        os.unlink(own_file)
    except OSError:
        own = None
    try:
        request = json.loads(data[4:])
        offered = str(request["token"]).encode()
    except (ValueError, KeyError, TypeError):
        offered = b""
    if not expected or not hmac.compare_digest(expected, offered) or uid == 0 or len(fds) != 3:
        conn.sendall(b"N")
        return 0
    conn.sendall(b"R")
    before = None
    if own is not None:
        try:
            before = isolation.unshare_all(own)
        except OSError as exc:
            os.write(fds[2], f"endstate_runner: no namespaces for this run: {exc}\n".encode())
            conn.sendall(struct.pack(">i", 71))
            return 0
    child = os.fork()
    if child == 0:
        status = 1
        try:
            conn.close()
            if before is not None:
                isolation.start_init(before)  # returns in pid 2 of the new namespace; pid 1 only reaps
            _become(request, fds, uid, gid)
            status = main(request["argv"])
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    for fd in fds:
        os.close(fd)
    _, waited = os.waitpid(child, 0)
    code = -os.WTERMSIG(waited) if os.WIFSIGNALED(waited) else os.WEXITSTATUS(waited)
    try:
        conn.sendall(struct.pack(">i", 128 - code if code < 0 else code))
    except OSError:
        pass  # the caller is gone (its command timed out): nothing to tell
    return 0


def _become(request, fds, uid, gid):
    """This process as the caller would have started it: its standard streams, umask, limits,
    user and groups, environment and argv; fresh random state."""
    import pwd
    import resource

    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    os.umask(int(request["umask"]))
    for name, (soft, hard) in request["limits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    os.setgroups(os.getgrouplist(pwd.getpwuid(uid).pw_name, gid))
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [os.path.join(HARNESS, "endstate_runner.py"), *request["argv"]]
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
    serve(sys.argv[2])
elif __name__ == "__main__" and sys.argv[1:2] == ["--program"]:
    program(sys.argv[2], sys.argv[3:])
elif __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # No atexit handler or leftover thread of the code under test runs after the
    # report and the guard's findings are written.
    os._exit(status)
