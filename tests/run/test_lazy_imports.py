"""Start-up stays lazy: no provider SDK is imported until a run needs it, and the
runner's fork server preloads only the SDK of the run's provider.

Each check runs in a fresh interpreter, since this test process may have imported
anything already.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from endstate.run._forkserver import preload_for

_SDKS = ("anthropic", "openai")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def _sdks_after(code: str) -> list[str]:
    done = _run(textwrap.dedent(code) + "\nimport sys\nprint('SDKS:', *(m for m in %r if m in sys.modules))\n" % (_SDKS,))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1].split()[1:]


def test_importing_the_packages_loads_no_sdk():
    assert _sdks_after("import endstate.cli, endstate.run, endstate.checks, endstate.authoring, endstate.agent, endstate.agent._worker, "
                       "endstate.models, endstate.cassettes, endstate.grading, endstate.report") == []


@pytest.mark.parametrize("argv", [["--help"], ["eval", "--help"], ["mutate", "--help"]])
def test_cli_help_loads_no_sdk(argv):
    code = f"""
        import sys
        from endstate.cli import main
        sys.argv = ["endstate", *{argv!r}]
        try:
            main()
        except SystemExit as exc:
            assert exc.code in (0, None), exc.code
    """
    assert _sdks_after(code) == []


def test_a_bad_model_spec_is_refused_without_loading_an_sdk():
    code = """
        from endstate.errors import ModelSpecError
        from endstate.models import check_spec
        check_spec("scripted/reference")
        try:
            check_spec("anthropic/claude-x", env={})
        except ModelSpecError:
            pass
        else:
            raise AssertionError("a missing key was accepted")
    """
    assert _sdks_after(code) == []


@pytest.mark.parametrize(("provider", "adapter", "absent"), [
    ("scripted", "endstate.models._openai", "endstate.models._anthropic"),
    ("openai", "endstate.models._openai", "endstate.models._anthropic"),
    ("openai-compatible", "endstate.models._openai", "endstate.models._anthropic"),
    ("anthropic", "endstate.models._anthropic", "endstate.models._openai"),
])
def test_preload_names_only_the_providers_adapter(provider, adapter, absent):
    modules = preload_for(provider)
    assert adapter in modules and absent not in modules
    assert "endstate.agent._worker" in modules


@pytest.mark.parametrize(("provider", "foreign"), [("scripted", False), ("anthropic", False), ("scripted", True)])
def test_every_preloaded_name_imports(provider, foreign):
    # The fork server skips a name that fails to import without a word: a typo would only cost time.
    done = _run("import importlib\n" + "".join(f"importlib.import_module({m!r})\n"
                                               for m in preload_for(provider, foreign=foreign)))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(("provider", "foreign", "loaded", "absent"), [
    ("scripted", False, "openai", "anthropic"),
    ("anthropic", False, "anthropic", "openai"),
    # A foreign agent's worker asks through the proxy, with no SDK: neither is loaded for it.
    ("scripted", True, "endstate.agents._run", "openai"),
    ("anthropic", True, "endstate.agents._run", "anthropic"),
])
def test_the_fork_server_preloads_only_the_runs_sdk(provider, foreign, loaded, absent):
    # A worker forked from the server reports, by its exit code, which SDKs it inherited.
    code = f"""
        from endstate.run._forkserver import FORKS, start_fork_server
        start_fork_server({provider!r}, foreign={foreign!r})
        probe = "import sys; sys.exit(({loaded!r} not in sys.modules) + 2 * ({absent!r} in sys.modules))"
        worker = FORKS.Process(target=exec, args=(probe,))
        worker.start()
        worker.join()
        print("exit", worker.exitcode)
    """
    done = _run(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["exit", "0"], (
        "1: the run's SDK was not preloaded; 2: another provider's SDK was; 3: both")


def test_the_fork_servers_warm_up_request_goes_through_in_memory():
    # If the SDK changed so that the warm-up fails, workers would silently pay ~150 ms each again.
    done = _run("from endstate.agent import TOOLS\nfrom endstate.models._warm import warm_openai\nassert warm_openai(list(TOOLS)) is True\n"
                "import threading\nassert threading.active_count() == 1, threading.enumerate()\n")
    assert done.returncode == 0, done.stderr
