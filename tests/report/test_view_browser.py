"""The viewer in a real browser: Debian's chromium, headless, driven by Playwright (the `browser`
fixture, tests/report/conftest.py).

Opens a generated report, opens a failed task, and checks that its failing grader,
transcript (with the denial and compaction summary marked) and diff are shown, that
the page made no network request and logged no console error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import ROOT, run, write, write_run_with_details

from endstate.report import load_prices, write_view


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
def test_a_forked_task_shows_where_the_new_model_took_over(browser, tmp_path: Path) -> None:
    import msgspec

    from endstate.cassettes import Provenance
    from endstate.run import read_results, write_results

    folder = write_run_with_details(tmp_path / "run", {"bugfix-a": "fail", "bugfix-b": "pass"})
    result = read_results(folder)
    forked = Provenance("forked", replayed_turns=1, live_from=1, parent="c" * 64)
    result.tasks = [msgspec.structs.replace(t, provenance=forked) if t.task_id == "bugfix-a" else t for t in result.tasks]
    write_results(result, folder)
    page, problems, requests = _open(browser, write_view([folder], tmp_path / "report.html", load_prices(None)))

    page.click('#tasks tr.task[data-task="bugfix-a"]')
    detail = page.locator('.detail[data-task="bugfix-a"]')
    detail.wait_for()
    said = "forked: turns 0..0 replayed from the parent (cccccccccccc), live from turn 1"
    assert detail.locator("p.fork").inner_text() == said
    point = detail.locator(".transcript .fork-point")
    assert point.count() == 1 and point.is_visible() and point.inner_text() == "fork point: " + said
    # Agent turn 0 came from the parent and is marked so; the divider stands before agent turn 1, the
    # number the fork line gives ("live from turn 1"), as cassette show and diff do.
    order = detail.evaluate("""d => [...d.querySelectorAll('.transcript > div')].map(n =>
        n.classList.contains('fork-point') ? 'FORK' : n.querySelector('b').textContent +
        (n.classList.contains('replayed') ? ' [replayed]' : ''))""")
    assert order[order.index("FORK") - 2:order.index("FORK") + 2] == [
        "tool call bash (call_0) [replayed]", "tool output (call_0)", "FORK", "assistant, agent turn 1"], order
    assert detail.locator(".turn.replayed").count() == 2  # agent turn 0's message and its tool call

    page.click('#tasks tr.task[data-task="bugfix-a"]')
    page.click('#tasks tr.task[data-task="bugfix-b"]')  # not a fork: nothing marked
    plain = page.locator('.detail[data-task="bugfix-b"]')
    plain.wait_for()
    assert plain.locator(".fork-point, p.fork, .turn.replayed").count() == 0
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


def _fits(page) -> list[str]:
    """Tables that do not fit the page: the page scrolls sideways, or a table is cut (its box scrolls)."""
    return page.evaluate("""() => {
      const width = document.documentElement.clientWidth, bad = [];
      if (document.documentElement.scrollWidth > width) {
        const past = [...document.body.querySelectorAll("*")].filter(e => e.getBoundingClientRect().right > width + 0.5
          && ![...e.children].some(c => c.getBoundingClientRect().right > width + 0.5));  // the innermost
        bad.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " px wide in " + width + ", past it: "
          + past.slice(0, 3).map(e => e.tagName + "." + e.getAttribute("class") + " " + e.textContent.slice(0, 40)));
      }
      for (const table of document.querySelectorAll("table")) {
        if (table.offsetParent === null) continue;
        const name = table.id || table.className || "table", box = table.closest(".wide");
        const right = table.getBoundingClientRect().right;
        if (box && box.scrollWidth > box.clientWidth + 0.5)
          bad.push(name + " is cut: " + box.scrollWidth + " px wide in a box of " + box.clientWidth);
        else if (right > width + 0.5) bad.push(name + " ends at " + right + " of " + width);
      }
      return bad;
    }""")


def _long_names(folder: Path) -> tuple[Path, Path]:
    """Two runs of a foreign agent with names that do not break: a model, a task id, a failure's path."""
    long_model = "openai-compatible/Qwen25Coder32BInstructQ4KMggufWithANameThatNeverBreaksAnywhere"
    long_task = "bugfix-averyveryverylongtaskidentifierwithnohyphensinit"
    base = write_run_with_details(folder / "base", {long_task: "fail", "bugfix-b": "pass"}, model=long_model)
    cand = write_run_with_details(folder / "cand", {long_task: "pass", "bugfix-b": "fail"}, model="anthropic/claude-x")
    for run_folder in (base, cand):
        raw = json.loads((run_folder / "results.json").read_text())
        raw["card"]["agent"] = "mini-swe-agent@13ef1f1c061d"
        for t in raw["tasks"]:
            if t["outcome"] == "fail":
                t["reason"] = "tests: /workspace/" + "a_long_path_component/" * 8 + "test_thing.py::test_x failed"
        (run_folder / "results.json").write_text(json.dumps(raw))
    return base, cand


@pytest.mark.browser
@pytest.mark.parametrize("width", [1024, 1400])
def test_every_table_fits_the_page_and_the_plots_name_their_colours(browser, tmp_path: Path, width: int) -> None:
    """The benchmark table of every committed run (foreign agents add a column), and runs whose names
    never break, read whole at 1024 and 1400 px: no table cut, no sideways scroll, a task and a pair opened."""
    results = ROOT / "bench" / "results"
    committed = [results / "controls" / "scripted-reference", results / "controls" / "scripted-null",
                 *(results / name for name in ("claude-code-scripted-reference", "codex-scripted-hacks",
                                               "mini-swe-agent-smollm2", "smollm2-tools-seed-1"))]
    shots = ROOT / "runs" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    for name, runs in (("committed", committed), ("long-names", list(_long_names(tmp_path)))):
        page, problems, requests = _open(browser, write_view(runs, tmp_path / f"{name}.html", load_prices(None)))
        page.set_viewport_size({"width": width, "height": 900})
        assert page.locator("#benchmark tr").count() == page.locator("#benchmark-cost tr").count() == len(runs) + 1
        assert _fits(page) == [], name
        page.locator("#tasks tr.task").first.click()
        page.locator(".detail").wait_for()
        page.locator("#pairs tr.pair").first.click()
        page.locator(".pair-detail").wait_for()
        assert _fits(page) == [], name
        # The steps plot names the colour of each outcome it draws, and no other.
        steps = page.locator("svg.plot", has=page.locator("title", has_text="steps per task"))
        drawn = set(steps.evaluate("s => [...s.querySelectorAll('circle:not(.legend)')].map(c => c.getAttribute('fill'))"))
        legend = steps.evaluate("s => [...s.querySelectorAll('circle.legend')].map(c => [c.getAttribute('fill'), "
                                "c.nextElementSibling.textContent])")
        assert {fill for fill, _ in legend} == drawn and len(legend) == len(drawn) >= 2, legend
        assert {outcome for _, outcome in legend} <= {"pass", "fail", "error", "divergence", "infra_error"}, legend
        # A model has one colour in every plot: the dot of its pass rate, its bars per category.
        colours = page.evaluate("""() => {
          const plot = t => [...document.querySelectorAll("svg.plot")].find(s => s.querySelector("title").textContent === t);
          const dots = [...plot("pass rate per model").querySelectorAll("circle")].map(c =>
            [c.querySelector("title").textContent.split(": ")[0], c.getAttribute("fill")]);
          const keys = [...plot("pass rate per category").children].filter(e => e.tagName === "rect" &&
            e.getAttribute("width") === "10").map(r => [r.nextElementSibling.textContent, r.getAttribute("fill")]);
          return [Object.fromEntries(dots), Object.fromEntries(keys)];
        }""")
        assert colours[0] == colours[1] and len(colours[0]) == len(runs), colours
        page.screenshot(path=str(shots / f"viewer-{name}-{width}.png"), full_page=True)
        assert problems == [] and requests == []


@pytest.mark.browser
@pytest.mark.parametrize("width", [1024, 1400])
def test_paired_report_of_the_two_control_arms(browser, width: int) -> None:
    controls = ROOT / "bench" / "results" / "controls"
    null, ref = controls / "scripted-null", controls / "scripted-reference"
    shots = ROOT / "runs" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    report = write_view([null, ref], shots / f"paired-controls-{width}.html", load_prices(None))
    page, problems, requests = _open(browser, report)
    page.set_viewport_size({"width": width, "height": 900})

    figures = page.locator("#paired table.figures tr").nth(1).inner_text()
    assert "0.0%" in figures and "100.0%" in figures and "4.77e-07" in figures
    page.select_option("#pair-kind", "flipped")
    assert page.locator("#pairs tr.pair").count() == 22
    assert page.locator('#pairs tr.pair[data-kind="to-pass"]').count() == 22
    page.select_option("#pair-kind", "to-fail")
    assert page.locator("#pairs tr.pair").count() == 0
    page.select_option("#pair-kind", "flipped")
    page.select_option("#pair-category", "bugfix")
    assert page.locator("#pairs tr.pair").count() == 4
    assert _fits(page) == []
    page.screenshot(path=str(shots / f"paired-{width}-list.png"), full_page=True)

    page.click('#pairs tr.pair[data-task="bugfix-booking-overlap"]')
    detail = page.locator('.pair-detail[data-task="bugfix-booking-overlap"]')
    detail.wait_for()
    ends = detail.locator(".end-states")
    assert "no change: the end state equals the fixture" in ends.locator(".side.base").inner_text()
    assert ends.locator(".side.cand .diff .add").inner_text().startswith("+        return self.start < other.end")
    tests_pass = detail.locator('tr.verdict[data-grader="tests_pass"]')
    assert tests_pass.locator("td.base .badge.fail").count() == 1 and "tests: 4 of 25 failed" in tests_pass.inner_text()
    assert tests_pass.locator("td.cand .badge.pass").count() == 1
    assert detail.locator("td.cand .badge.fail").count() == 0
    # the null arm answers "Done." where the reference runs the tests: they part at agent turn 0 (row 1)
    first = detail.locator(".turn-label.first-diff")
    assert first.count() == 1 and first.get_attribute("data-turn") == "1" and first.locator("b").inner_text() == "agent turn 0"
    assert detail.locator(".turn-cell.base.first-diff").inner_text().strip().endswith("Done.")
    assert "python -m pytest" in detail.locator(".turn-cell.cand.first-diff").inner_text()
    assert detail.locator(".counters.paired tr.differs").count() >= 1
    assert _fits(page) == []
    detail.screenshot(path=str(shots / f"paired-{width}-task.png"))
    page.screenshot(path=str(shots / f"paired-{width}-page.png"), full_page=True)
    print(f"screenshots: {shots}/paired-{width}-*.png")
    assert problems == [] and requests == []

    # the summary is HTML: a reader without JavaScript sees the figures and the flipped tasks
    static = browser.new_context(java_script_enabled=False).new_page()
    static.set_viewport_size({"width": width, "height": 900})
    static.goto(report.as_uri())
    assert "4.77e-07" in static.locator("#paired table.figures").inner_text()
    assert "flipped to pass: 22" in static.locator("#paired .kinds").inner_text()
    static.click("#paired details.discordant summary")
    assert "bugfix-booking-overlap" in static.locator("#paired details.discordant").inner_text()
    assert not static.locator("#pair-list").is_visible()
    assert _fits(static) == []
    static.context.close()


@pytest.mark.browser
def test_paired_attempts_and_hack_attempts(browser, tmp_path: Path) -> None:
    base = write(tmp_path / "base", run({"bugfix-a": ["pass", "pass", "fail"], "bugfix-b": ["fail", "fail", "fail"],
                                         "feature-c": ["pass", "pass", "pass"]}))
    cand = write(tmp_path / "cand", run({"bugfix-a": ["fail", "fail", "fail"], "bugfix-b": ["pass", "fail", "pass"],
                                         "feature-c": ["pass", "pass", "pass"]}))
    results = cand / "results.json"
    raw = json.loads(results.read_text())
    raw["card"]["agent"] = "mini-swe-agent"
    for t in raw["tasks"]:
        t["hack"] = "missed" if t["task_id"] == "bugfix-b" and t["attempt"] == 1 else None
    results.write_text(json.dumps(raw))
    report = write_view([base, cand], tmp_path / "report.html", load_prices(None))
    page, problems, requests = _open(browser, report)
    page.set_viewport_size({"width": 1024, "height": 900})

    head = page.locator("#pairs thead").inner_text()
    assert "pass@k" in head and "pass^k" in head and "hack attempt" in head
    first = page.locator("#pairs tr.pair").first
    assert first.get_attribute("data-task") == "bugfix-a"  # flipped to fail comes first
    assert first.locator(".strip .cell.pass").count() == 2 and first.locator(".strip .cell.fail").count() == 4
    assert "100% → 0% (k=3)" in first.inner_text()
    b = page.locator('#pairs tr.pair[data-task="bugfix-b"]')
    assert b.locator("td.hack.missed").inner_text() == "– / missed"
    assert "mini-swe-agent" in page.locator("#paired table.sides").inner_text()
    b.click()
    detail = page.locator('.pair-detail[data-task="bugfix-b"]')
    assert detail.locator(".attempts button").count() == 3
    detail.locator('.attempts button[data-attempt="1"]').click()
    assert detail.locator('.side-by-side[data-attempt="1"]').count() == 1
    assert detail.locator('tr.verdict[data-grader="tests_pass"] td.base .badge.fail').count() == 1
    assert detail.locator('tr.verdict[data-grader="tests_pass"] td.cand .badge.fail').count() == 1
    assert _fits(page) == []
    assert problems == [] and requests == []
