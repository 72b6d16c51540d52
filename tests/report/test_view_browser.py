"""The viewer in a real browser: Debian's chromium, headless, driven by Playwright.

Opens a generated report, opens a failed task, and checks that its failing grader,
transcript (with the denial and compaction summary marked) and diff are shown, that
the page made no network request and logged no console error. Skipped where chromium
or Playwright is missing, except in CI, where that is a failure (CI installs both).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from endstate.report import load_prices, write_view
from report_helpers import ROOT, write_run_with_details

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _missing() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    if not Path(CHROMIUM).exists():
        return "Debian's chromium is not installed (apt-get install chromium)"
    return ""


@pytest.fixture(scope="module")
def browser():
    why = _missing()
    if why:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"CI must provide a browser: {why}", pytrace=False)
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where chromium's own sandbox refuses to start.
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


def _open(browser, report: Path):
    page = browser.new_page()
    problems, requests = [], []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
    page.goto(report.as_uri())
    return page, problems, requests


@pytest.mark.browser
def test_open_a_failed_task_and_see_why(browser, tmp_path: Path) -> None:
    folder = write_run_with_details(tmp_path / "run", {"bugfix-a": "fail", "bugfix-b": "pass", "feature-c": "pass",
                                                         "feature-d": "divergence"})
    report = write_view([folder], tmp_path / "report.html", load_prices(None))
    page, problems, requests = _open(browser, report)

    assert page.locator("#tasks tr.task").count() == 4
    assert page.locator("svg.plot").count() == 4
    page.select_option("#outcome", "fail")
    assert page.locator("#tasks tr.task").count() == 1
    page.click('#tasks tr.task[data-task="bugfix-a"]')
    detail = page.locator('.detail[data-task="bugfix-a"]')
    detail.wait_for()

    failing = detail.locator('tr.verdict.fail[data-grader="tests_pass"]')
    assert failing.is_visible() and "tests: 1 of 4 failed" in failing.inner_text()
    assert detail.locator("tr.verdict.pass").count() == 1
    assert detail.locator(".turn.denied").is_visible()
    assert "recursive-delete" in detail.locator(".turn.denied").inner_text()
    assert detail.locator(".turn.compaction").count() == 1
    assert detail.locator(".turn.call").count() == 2
    assert detail.locator(".diff .add").inner_text().startswith("+elif len(d) >= cap:")
    assert detail.locator(".diff .del").inner_text().startswith("-if len(d) >= cap:")
    # agent output is text, never markup
    assert page.evaluate("window.pwned === undefined")
    assert "window.pwned" in detail.inner_text()
    page.click('#tasks tr.task[data-task="bugfix-a"]')
    assert page.locator(".detail").count() == 0
    page.focus('#tasks tr.task[data-task="bugfix-a"]')
    page.keyboard.press("Enter")  # the list works from the keyboard too
    assert page.locator('.detail[data-task="bugfix-a"]').count() == 1

    page.select_option("#outcome", "divergence")
    page.click('#tasks tr.task[data-task="feature-d"]')
    diverged = page.locator('.detail[data-task="feature-d"]')
    diverged.wait_for()
    assert "Replay divergence: request diff" in diverged.inner_text()
    assert diverged.locator(".diff .add").first.inner_text().startswith('+settings: {"temperature": 0.5}')
    assert "not graded: divergence" in diverged.inner_text()
    assert problems == [] and requests == []


@pytest.mark.browser
def test_walk_a_committed_control_run(browser, tmp_path: Path) -> None:
    controls = ROOT / "bench" / "results" / "controls"
    null, ref = controls / "scripted-null", controls / "scripted-reference"
    report = write_view([ref, null], tmp_path / "report.html", load_prices(None), (null, ref))
    page, problems, requests = _open(browser, report)
    assert page.locator("#benchmark .badge.verified").count() == 2
    page.select_option("#run", "1")
    page.select_option("#outcome", "fail")
    first = page.locator("#tasks tr.task").first
    task_id = first.get_attribute("data-task")
    first.click()
    detail = page.locator(f'.detail[data-task="{task_id}"]')
    detail.wait_for()
    assert detail.locator("tr.verdict.fail").count() >= 1
    assert detail.locator(".turn.assistant").count() >= 1
    assert "no change: the end state equals the fixture" in detail.inner_text()
    assert problems == [] and requests == []
