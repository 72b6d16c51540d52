"""Fixtures the end-to-end tests share."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, DISTURBED, TASKS, fingerprint


@pytest.fixture(scope="session")
def undisturbed(tmp_path_factory) -> list[tuple[str, str, str]]:
    """An undisturbed replay of the reference arm on DISTURBED (`fingerprint`), made once for the
    tests that kill, restart or starve a run of the same and compare what it ends in: a task's
    outcome and sealed tree hash are its own, whatever else runs beside it or on which engine."""
    out = tmp_path_factory.mktemp("undisturbed")
    ran = run_endstate("eval", "--suite", str(TASKS), "--model", "scripted/reference", "--replay",
                       str(CASSETTES / "scripted-reference"), "-j", "2", *[a for t in DISTURBED for a in ("--task", t)],
                       "--out", str(out))
    assert ran.code == 0, ran
    found = fingerprint(out)
    assert [task for task, _, _ in found] == sorted(DISTURBED) and {o for _, o, _ in found} == {"pass"}, found
    return found
