"""The report tests' browser: Debian's chromium, headless, driven by Playwright.

Skipped where chromium or Playwright is missing, except in CI, where that is a failure
(CI installs both).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

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
