"""Does `endstate view` stay usable as runs grow? Small run against a large one.

    .venv/bin/python bench/viewer_scale.py [--small 100] [--large 5000] [--chromium /usr/bin/chromium]

Writes two synthetic runs (each task with a 24-message transcript and a diff beside
its results), renders each with `render_view`, and, when Playwright and chromium are
installed, opens each page headless and times until the task list is drawn and
until one task's details are open. Task details stay JSON until opened, so opening
the page and a task should grow much less than the task count; the ratios below
say by how much, measured in this one run.

Then the paired view: two runs of --large tasks each (the candidate flips every
seventh task and answers differently from turn 3 on), opened until the paired list
is drawn, and one flipped task opened side by side. The target is to open in 3 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from endstate.report import load_prices, write_view
from endstate.run._results import GraderVerdict, RunCard, RunResult, TaskResult, write_results

TRANSCRIPT = [{"role": "system", "content": "You are a software engineer."},
              {"role": "user", "content": "Fix the bug described in the README."}]
for step in range(11):
    TRANSCRIPT.append({"role": "assistant", "tool_calls": [
        {"id": f"call_{step}", "name": "bash", "arguments": json.dumps({"command": f"sed -n {step},80p lib.py"})}]})
    TRANSCRIPT.append({"role": "tool", "tool_call_id": f"call_{step}", "content": "def f(x):\n    return x\n" * 20})
DIFF = "--- a/lib.py\n+++ b/lib.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x\n+    return x + 1\n"


def write_run(folder: Path, tasks: int, flip_every: int = 0) -> Path:
    """`flip_every` > 0: a candidate run, whose every `flip_every`-th task's outcome is flipped
    and whose transcripts part from the base's at turn 3."""
    card = RunCard(endstate_version="0.1.0", model="openai/synthetic", provider="openai", temperature=0.0, seed=0,
                   retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker",
                   image="endstate-sandbox:1", image_id="sha256:" + "0" * 64, task_pack_hash="0" * 64, tasks=tasks)
    results = []
    for i in range(tasks):
        outcome = "pass" if i % 3 else "fail"
        if flip_every and i % flip_every == 0:
            outcome = "fail" if outcome == "pass" else "pass"
        verdicts = [GraderVerdict("tests_pass", outcome, "tests: 3 of 9 failed" if outcome == "fail" else "")]
        task = TaskResult(f"bugfix-{i:05d}", ["bugfix", "feature", "refactor"][i % 3], outcome, verdicts=verdicts,
                          failing_grader="tests_pass" if outcome == "fail" else "")
        task.counters.steps = 11
        results.append(task)
    write_results(RunResult(card, results), folder)
    (folder / "transcripts").mkdir()
    (folder / "diffs").mkdir()
    transcript = [dict(m) for m in TRANSCRIPT]
    if flip_every:
        transcript[6] = {**transcript[6], "content": "def f(x):\n    return x + 1\n" * 20}
    text = json.dumps(transcript)
    for task in results:
        (folder / "transcripts" / f"{task.task_id}.json").write_text(text)
        (folder / "diffs" / f"{task.task_id}.diff").write_text(DIFF)
    return folder


def measure(work: Path, tasks: int, chromium: str | None) -> dict[str, float]:
    folder = write_run(work / f"run-{tasks}", tasks)
    start = time.perf_counter()
    page_path = write_view([folder], work / f"view-{tasks}.html", load_prices(None))
    figures = {"render_s": time.perf_counter() - start, "size_mb": page_path.stat().st_size / 1e6}
    if chromium:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(page_path.as_uri())
            page.locator("#tasks tr.task").first.wait_for()
            figures["open_s"] = time.perf_counter() - start
            start = time.perf_counter()
            page.locator("#tasks tr.task").first.click()
            page.locator(".detail .turn").first.wait_for()
            figures["task_s"] = time.perf_counter() - start
            browser.close()
    return figures


def measure_paired(work: Path, tasks: int, chromium: str | None) -> dict[str, float]:
    base = write_run(work / f"base-{tasks}", tasks)
    cand = write_run(work / f"cand-{tasks}", tasks, flip_every=7)
    start = time.perf_counter()
    page_path = write_view([base, cand], work / f"paired-{tasks}.html", load_prices(None))
    figures = {"render_s": time.perf_counter() - start, "size_mb": page_path.stat().st_size / 1e6}
    if chromium:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1024, "height": 900})
            start = time.perf_counter()
            page.goto(page_path.as_uri())
            page.locator("#pairs tr.pair").first.wait_for()
            page.locator("#tasks tr.task").first.wait_for()
            figures["open_s"] = time.perf_counter() - start
            start = time.perf_counter()
            page.locator("#pairs tr.pair").first.click()
            page.locator(".pair-detail .turn-label.first-diff").wait_for()
            figures["task_s"] = time.perf_counter() - start
            browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--chromium", default=shutil.which("chromium"))
    args = parser.parse_args()
    try:
        import playwright  # noqa: F401
    except ImportError:
        args.chromium = None
    with tempfile.TemporaryDirectory(prefix="endstate-viewer-") as tmp:
        small = measure(Path(tmp), args.small, args.chromium)
        large = measure(Path(tmp), args.large, args.chromium)
        paired = measure_paired(Path(tmp), args.large, args.chromium)
    ratio = args.large / args.small
    print(f"tasks: {args.small} vs {args.large} ({ratio:g}x)")
    for key, label in (("size_mb", "file size (MB)"), ("render_s", "render (s)"), ("open_s", "open in chromium (s)"),
                       ("task_s", "open one task (s)")):
        if key in small:
            print(f"{label:22s} {small[key]:8.3f} -> {large[key]:8.3f}   x{large[key] / small[key]:.1f}")
    print(f"paired view, 2 x {args.large} tasks:")
    for key, label in (("size_mb", "file size (MB)"), ("render_s", "render (s)"), ("open_s", "open in chromium (s)"),
                       ("task_s", "open one pair (s)")):
        if key in paired:
            print(f"  {label:22s} {paired[key]:8.3f}" + ("   (target: 3 s)" if key == "open_s" else ""))
    if not args.chromium:
        print("(no chromium or Playwright: browser timings skipped)")


if __name__ == "__main__":
    main()
