"""The Inspect export opened in Inspect's own viewer, in a real browser: `inspect view` serves the
log folder, chromium (the `browser` fixture) opens it, and the log's header, samples and scores
read as the run has them, with no NaN anywhere (an export without a start time showed its
duration as `NaN days NaN hr...`).

Twice: with the inspect_ai the `export` extra pins (the test extra installs it), and with the
oldest one endstate says reads its logs (OLDEST_READER, in the venv `make peers` makes).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_helpers import ROOT, card, task
from test_export_offline import TRANSCRIPT

from endstate.report import export_run
from endstate.run import read_results
from endstate.run._results import RunResult, TaskResult, write_results

CONTROL = ROOT / "bench" / "results" / "controls" / "scripted-reference"


def _inspect(which: str) -> Path:
    if which == "pinned":
        return Path(sys.executable).with_name("inspect")
    folder = os.environ.get("ENDSTATE_INSPECT_OLDEST")
    if not folder:
        pytest.fail("the oldest inspect_ai endstate claims runs from the venv `make peers` makes "
                    "(ENDSTATE_INSPECT_OLDEST names its bin/)", pytrace=False)
    return Path(folder) / "inspect"


@contextlib.contextmanager
def _serving(inspect: Path, logs: Path) -> Iterator[str]:
    """`inspect view` over the folder `logs`, on a free port of this host, until the block ends."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(inspect), "view", "--log-dir", str(logs), "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"inspect view did not start: {server.stderr.read() if server.stderr else ''}")
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _synthetic(folder: Path) -> Path:
    """Two tasks of two attempts: a pass, a fail, an infra_error (no score) and a pass, each with its wall time."""
    broken = TaskResult("bugfix-b", "bugfix", "infra_error", reason="the engine went away")
    attempts = [task("bugfix-a", "pass"), task("bugfix-a", "fail", attempt=1), broken, task("bugfix-b", "pass", attempt=1)]
    for attempt, wall in zip(attempts, (4.5, 5.5, 6.5, 7.7)):
        attempt.wall_s = wall
    write_results(RunResult(card(tasks=2, attempts=2), attempts), folder)
    (folder / "transcripts").mkdir()
    for stem in ("bugfix-a", "bugfix-a.attempt-1", "bugfix-b", "bugfix-b.attempt-1"):
        (folder / "transcripts" / f"{stem}.json").write_text(json.dumps(TRANSCRIPT))
    return folder


def _text_once(page, shows: str, timeout: float = 30.0) -> str:
    """The page's text as shown (Inspect capitalises its labels in CSS) once it matches `shows`."""
    deadline = time.monotonic() + timeout
    while not re.search(shows, text := page.inner_text("body")):
        if time.monotonic() > deadline:
            pytest.fail(f"the viewer never showed {shows!r}: {text[:2000]}")
        time.sleep(0.3)
    return text


def _open_log(page, url: str, name: str) -> str:
    """The log's page: the newest viewer lists the folder's logs first, the oldest opens the only one."""
    page.goto(url)
    text = _text_once(page, r"DURATION")
    if "ACCURACY" not in text:  # the list of logs: open this one
        page.get_by_text(name, exact=True).first.dispatch_event("click")
    return _text_once(page, r"ACCURACY[\s\S]*DURATION[\s\S]*(bugfix-a|bugfix-booking-overlap)")


@pytest.mark.browser
@pytest.mark.parametrize("which", ["pinned", pytest.param("oldest", marks=pytest.mark.peers)])
def test_inspect_s_viewer_shows_the_duration_samples_and_scores(browser, tmp_path, which):
    inspect = _inspect(which)
    runs = {"control": CONTROL, "synthetic": _synthetic(tmp_path / "synthetic")}
    for name, run in runs.items():
        logs = tmp_path / f"logs-{name}"
        export_run(run, "inspect", logs / f"{name}.eval")
        walls = [t.wall_s for t in read_results(run).tasks]
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        with _serving(inspect, logs) as url:
            text = _open_log(page, url, run.name)
            assert "NaN" not in text, text[:2000]
            # Inspect shows the run's duration from stats.started_at and completed_at: the attempts' wall time.
            assert re.search(rf"DURATION\s+{sum(walls):.1f} sec", text), text[:2000]
            if name == "control":
                assert re.search(r"ACCURACY\s+1\.0", text) and "22 samples" in text, text[:2000]
                assert re.search(r"bugfix-booking-overlap.*?\bpass\b.*?\bC\b", text, re.S), text[:3000]
                assert not re.search(r"(?m)^I$", text), "the reference arm passes every task"
            else:  # accuracy over the scored attempts: two passes of three; the infra_error has no score
                assert re.search(r"ACCURACY[^\n]*\s+0\.667", text) and "2 x 2 samples" in text, text[:2000]
                assert re.search(r"(?m)^C$", text) and re.search(r"(?m)^I$", text), text[:3000]
                # The infra_error is Inspect's own "had errors and were not scored", its reason shown.
                assert "1 of 4 samples (25%) had errors and were not scored" in text, text[:3000]
            page.screenshot(path=str(tmp_path / f"inspect-{which}-{name}.png"))
        assert errors == [], errors
        page.close()
