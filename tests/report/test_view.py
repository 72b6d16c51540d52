"""The viewer's HTML without a browser: self-contained, safe to embed agent output in,
deterministic, and lazy (task details stay JSON until opened)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_runner import run_endstate
from report_helpers import DIFF, ROOT, TRANSCRIPT, run, write, write_run_with_details

from endstate.report import load_prices, render_view

OUTCOMES = {"bugfix-a": "fail", "bugfix-b": "pass", "feature-c": "pass"}


def _blocks(page: str) -> dict[str, object]:
    return {m.group(1): json.loads(m.group(2)) for m in
            re.finditer(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)}


def test_page_is_self_contained_and_carries_every_detail(tmp_path: Path) -> None:
    folder = write_run_with_details(tmp_path / "run", OUTCOMES)
    page = render_view([folder], load_prices(None))
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<link rel=\"stylesheet\"" not in page and "@import" not in page
    blocks = _blocks(page)
    index = blocks.pop("index")
    (listed,) = index["runs"]
    assert [t[0] for t in listed["tasks"]] == sorted(OUTCOMES)
    failed = blocks[listed["tasks"][0][7]]
    assert failed["outcome"] == "fail" and failed["failing_grader"] == "tests_pass"
    assert failed["transcript"] == TRANSCRIPT and failed["diff"] == DIFF
    assert [v["grader"] for v in failed["verdicts"]] == ["tests_pass", "holdout"]
    assert page.count("<svg") == 4


def test_agent_output_cannot_close_the_script_block(tmp_path: Path) -> None:
    page = render_view([write_run_with_details(tmp_path / "run", OUTCOMES)], load_prices(None))
    assert "window.pwned" in page
    assert page.count("</script>") == page.count("<script")  # only the page's own blocks close
    assert "</script><script>window.pwned" not in page


def test_same_runs_give_the_same_bytes(tmp_path: Path) -> None:
    folder = write_run_with_details(tmp_path / "run", OUTCOMES)
    assert render_view([folder], load_prices(None)) == render_view([folder], load_prices(None))


def test_thousands_of_tasks_render_lazily(tmp_path: Path) -> None:
    many = {f"bugfix-{i:04d}": "pass" if i % 3 else "fail" for i in range(3000)}
    page = render_view([write(tmp_path / "run", run(many))], load_prices(None))
    assert len(_blocks(page)["index"]["runs"][0]["tasks"]) == 3000
    assert '<tr class="task"' not in page  # rows are drawn by the script, a page at a time


def test_works_from_results_json_alone_and_via_the_cli(tmp_path: Path) -> None:
    write(tmp_path / "bare", run(OUTCOMES))
    out = tmp_path / "out" / "report.html"
    ran = run_endstate("view", str(tmp_path / "bare" / "results.json"), "-o", str(out))
    assert ran.returncode == 0, ran.stderr
    details = [v for k, v in _blocks(out.read_text()).items() if k != "index"]
    assert details and all(d["transcript"] is None and d["diff"] is None for d in details)
    controls = ROOT / "bench" / "results" / "controls"
    ran = run_endstate("view", str(controls / "scripted-null"), "--controls", str(controls / "scripted-null"),
                       str(controls / "scripted-reference"), "-o", str(out), "--overwrite")
    assert ran.returncode == 0, ran.stderr
    assert 'class="badge verified"' in out.read_text()


def test_view_writes_beside_its_run_and_refuses_an_existing_file(tmp_path: Path) -> None:
    folder = write(tmp_path / "run", run(OUTCOMES))
    (tmp_path / "cwd").mkdir()
    ran = run_endstate("view", str(folder), cwd=tmp_path / "cwd")
    assert ran.returncode == 0, ran.stderr
    assert (folder / "report.html").is_file() and not (tmp_path / "cwd" / "runs").exists()
    (folder / "report.html").write_text("mine")
    ran = run_endstate("view", str(folder), cwd=tmp_path / "cwd")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert "report.html already holds a report: pass --overwrite to replace it, or another -o/--out" in ran.stderr
    assert (folder / "report.html").read_text() == "mine"
    assert run_endstate("view", str(folder), "--overwrite", cwd=tmp_path / "cwd").returncode == 0


def test_a_task_recording_its_adequacy_shows_it_in_its_view_and_on_the_card(tmp_path: Path) -> None:
    import msgspec

    from endstate.task import Measured

    result = run(OUTCOMES)
    result = msgspec.structs.replace(result, card=msgspec.structs.replace(
        result.card, adequacy={"bugfix-a": Measured(10, 9, 1)}))
    page = render_view([write(tmp_path / "run", result)], load_prices(None))
    blocks = _blocks(page)
    (listed,) = blocks.pop("index")["runs"]
    shown = {t[0]: blocks[t[7]]["adequacy"] for t in listed["tasks"]}
    assert shown == {"bugfix-a": "9/9 mutants killed, 1 equivalent", "bugfix-b": None, "feature-c": None}
    assert "task adequacy: " in page  # the script draws it in the task's details
    assert "&quot;adequacy&quot;: {\n    &quot;bugfix-a&quot;: &quot;9/9 mutants killed, 1 equivalent&quot;" in page
