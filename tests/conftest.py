"""Shared test plumbing: tests marked `docker` need a live engine.

Where no engine answers they are skipped, except in CI (CI set), where a
missing engine is a failure: CI is supposed to have started one.
"""

from __future__ import annotations

import os

import pytest

# Test data: the projects and tasks under tests/data carry test files of their own (a Harbor
# task's tests, a SWE-bench project's), run inside sandboxes, never by this suite.
collect_ignore = ["data"]

_ENGINE = pytest.StashKey[str]()  # "" when an engine answers, else why not


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.hookimpl(tryfirst=True)  # before any fixture of the test is set up
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("peers") is not None and not os.environ.get("ENDSTATE_PEERS"):
        why = "the peers' tools run from the venv `make peers` makes (ENDSTATE_PEERS names its bin/)"
        if _in_ci():
            pytest.fail(f"CI runs `make peers`: {why}", pytrace=False)
        pytest.skip(why)
    if item.get_closest_marker("docker") is None:
        return
    stash = item.config.stash
    if _ENGINE not in stash:
        from endstate.errors import SandboxUnavailable
        from endstate.sandbox import connect

        try:
            connect(timeout=5).close()
            stash[_ENGINE] = ""
        except SandboxUnavailable as exc:
            stash[_ENGINE] = str(exc)
    if stash[_ENGINE]:
        if _in_ci():
            pytest.fail(f"CI must provide a Docker engine: {stash[_ENGINE]}", pytrace=False)
        pytest.skip(stash[_ENGINE])


#: A rough cost per test, from its marks: an end-to-end run over many tasks, one Docker test, the rest.
_COST = {"slow": 30.0, "docker": 5.0}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Costliest files first, each file's tests in their own order: pytest-xdist hands a file to
    whichever worker is free, so a long file collected last keeps one worker busy after the
    others have finished (the longest-first rule of scheduling). The cost is guessed from the
    marks; the order is the same on every worker, as xdist requires."""
    cost: dict[str, float] = {}
    for item in items:
        mark = next((name for name in _COST if item.get_closest_marker(name)), None)
        cost[_file(item)] = cost.get(_file(item), 0.0) + _COST.get(mark, 0.05)
    order = {item.nodeid: index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[_file(item)], order[item.nodeid]))


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


@pytest.fixture(scope="session")
def cli():
    """Run the real CLI in a subprocess: `cli.run("eval", ...)` returns a `Ran` (tests/cli_runner.py)."""
    from cli_runner import Cli

    return Cli()
