"""The viewer's paired section without a browser: compare's figures in static HTML, the
pairs (discordant first) as data, the first differing turn, attempts, and the optional
fields other runs carry (hack, agent, impossible)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_runner import run_endstate
from report_helpers import ROOT, TRANSCRIPT, run, write

from endstate.report import compare_runs, load_prices, render_view
from endstate.report._turns import first_differing_turn, split_turns, turn_keys

BASE = {"bugfix-a": "pass", "bugfix-b": "pass", "feature-c": "fail", "feature-d": "fail", "refactor-e": "pass"}
CAND = {"bugfix-a": "fail", "bugfix-b": "pass", "feature-c": "pass", "feature-d": "fail", "refactor-e": "pass"}


def _blocks(page: str) -> dict[str, object]:
    return {m.group(1): json.loads(m.group(2)) for m in
            re.finditer(r'<script type="application/json" id="([^"]+)">(.*?)</script>', page, re.S)}


def _summary(page: str) -> str:
    """The paired section as a reader without JavaScript sees it: the static HTML, scripts out."""
    section = page[page.index('<section id="paired">'):page.index("</section>")]
    return re.sub(r"<[^>]+>", " ", section)


def _with_transcripts(folder: Path, transcripts: dict[str, list[dict]]) -> Path:
    (folder / "transcripts").mkdir(exist_ok=True)
    for task_id, messages in transcripts.items():
        (folder / "transcripts" / f"{task_id}.json").write_text(json.dumps(messages))
    return folder


def _edit(folder: Path, change) -> Path:
    """Rewrite results.json as a newer endstate might have written it."""
    path = folder / "results.json"
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))
    return folder


def test_two_runs_open_with_compares_figures_and_the_flipped_tasks_first(tmp_path: Path) -> None:
    base = write(tmp_path / "base", run(BASE, "scripted/base"))
    cand = write(tmp_path / "cand", run(CAND, "scripted/cand"))
    page = render_view([base, cand], load_prices(None))
    assert page.index('<section id="paired">') < page.index("<h2>Benchmark</h2>")
    summary = _summary(page)
    figures = compare_runs(run(BASE), run(CAND), by_category=True).summaries[0]
    assert (figures.base_better, figures.cand_better) == (1, 1)
    assert "60.0% (" in summary and "+0.0% (" in summary and f"{figures.p_value:.3g}" in summary
    assert "flipped to fail: 1" in summary and "flipped to pass: 1" in summary
    assert "both fail: 1" in summary and "both pass: 2" in summary
    assert "discordant tasks (2)" in summary and "bugfix-a, feature-c" in summary
    for category in ("bugfix", "feature", "refactor"):
        assert re.search(rf"<td>{category}</td>", page)
    (cand_index,) = _blocks(page)["paired-index"]["cands"]
    assert [(p["id"], p["kind"]) for p in cand_index["pairs"]] == [
        ("bugfix-a", "to-fail"), ("feature-c", "to-pass"), ("feature-d", "both-fail"),
        ("bugfix-b", "both-pass"), ("refactor-e", "both-pass")]
    # each side of a pair points at that run's own task details in the page
    blocks = _blocks(page)
    first = cand_index["pairs"][0]
    assert blocks[first["be"][0]]["outcome"] == "pass" and blocks[first["ce"][0]]["outcome"] == "fail"
    assert blocks[first["ce"][0]]["task_id"] == "bugfix-a"
    assert "hack" not in summary and _blocks(page)["paired-index"]["hack"] is False


def test_fewer_than_six_paired_tasks_carry_compares_small_n_warning(tmp_path: Path) -> None:
    base = write(tmp_path / "base", run(BASE, "scripted/base"))
    cand = write(tmp_path / "cand", run(CAND, "scripted/cand"))
    warning = compare_runs(run(BASE), run(CAND)).small_n
    assert warning.startswith("only 5 paired task(s)")
    out = tmp_path / "report.html"
    ran = run_endstate("view", str(base), str(cand), "-o", str(out))
    assert ran.returncode == 0 and "Traceback" not in ran.stderr
    assert ran.stderr.strip() == f"endstate: {cand} against {base}: {warning}"
    assert f"warning: {warning}" in re.sub(r"\s+", " ", _summary(out.read_text()))
    six = {**BASE, "refactor-f": "pass"}
    page = render_view([write(tmp_path / "b6", run(six)), write(tmp_path / "c6", run(six))], load_prices(None))
    assert "warning:" not in _summary(page)


def test_one_run_has_no_paired_section(tmp_path: Path) -> None:
    page = render_view([write(tmp_path / "base", run(BASE))], load_prices(None))
    assert "<section id=\"paired\">" not in page and "id=\"paired-index\"" not in page


def test_runs_of_different_packs_get_compares_message_and_still_a_page(tmp_path: Path) -> None:
    base = write(tmp_path / "base", run(BASE))
    other = write(tmp_path / "other", run(CAND, pack="c" * 64))
    notes: list[str] = []
    page = render_view([base, other], load_prices(None), notes=notes)
    assert "ran different task packs" in _summary(page) and "re-run both on the same tasks/" in _summary(page)
    assert _blocks(page)["paired-index"]["cands"] == []
    assert '<table id="pairs">' not in page
    assert len(notes) == 1 and "ran different task packs" in notes[0]
    out = tmp_path / "report.html"
    ran = run_endstate("view", str(base), str(other), "-o", str(out))
    assert ran.returncode == 0 and "Traceback" not in ran.stderr
    assert "no paired view of" in ran.stderr and "different task packs" in ran.stderr
    assert out.is_file()


def test_turns_are_split_at_each_assistant_message_and_compared_without_call_ids() -> None:
    turns = split_turns(TRANSCRIPT)
    assert [len(t) for t in turns] == [2, 2, 2, 1]
    renamed = json.loads(json.dumps(TRANSCRIPT).replace("call_0", "call_zz"))
    assert first_differing_turn(turn_keys(TRANSCRIPT), turn_keys(renamed)) is None
    changed = json.loads(json.dumps(TRANSCRIPT))
    changed[5]["content"] = "something else"
    assert first_differing_turn(turn_keys(TRANSCRIPT), turn_keys(changed)) == 2
    assert first_differing_turn(turn_keys(TRANSCRIPT), turn_keys(TRANSCRIPT[:6])) == 3
    assert first_differing_turn(turn_keys(TRANSCRIPT), None) is None


def test_the_first_differing_turn_is_in_each_pair(tmp_path: Path) -> None:
    changed = json.loads(json.dumps(TRANSCRIPT))
    changed[4]["tool_calls"][0]["arguments"] = "{\"path\": \"other.py\"}"
    base = _with_transcripts(write(tmp_path / "base", run(BASE)), {t: TRANSCRIPT for t in BASE})
    cand = _with_transcripts(write(tmp_path / "cand", run(CAND)), {t: TRANSCRIPT for t in CAND} | {"bugfix-a": changed})
    del_ = cand / "transcripts" / "feature-d.json"
    del_.unlink()
    (cand_index,) = _blocks(render_view([base, cand], load_prices(None)))["paired-index"]["cands"]
    turns = {p["id"]: p["turn"] for p in cand_index["pairs"]}
    assert turns == {"bugfix-a": [2], "feature-c": [None], "feature-d": ["missing"], "bugfix-b": [None],
                     "refactor-e": [None]}


def test_attempts_give_strips_and_pass_at_k_columns(tmp_path: Path) -> None:
    base = write(tmp_path / "base", run({"bugfix-a": ["pass", "pass", "fail"], "bugfix-b": ["fail", "fail", "fail"]}))
    cand = write(tmp_path / "cand", run({"bugfix-a": ["fail", "fail", "fail"], "bugfix-b": ["pass", "fail", "pass"]}))
    page = render_view([base, cand], load_prices(None))
    (cand_index,) = _blocks(page)["paired-index"]["cands"]
    by_id = {p["id"]: p for p in cand_index["pairs"]}
    a, b = by_id["bugfix-a"], by_id["bugfix-b"]
    assert a["b"] == ["pass", "pass", "fail"] and a["kind"] == "to-fail" and b["kind"] == "to-pass"
    assert a["k"] == 3 and a["bk"] == [1.0, 0.0] and a["ck"] == [0.0, 0.0]
    assert b["bk"] == [0.0, 0.0] and b["ck"] == [1.0, 0.0]
    assert len(a["be"]) == 3 and len(set(a["be"])) == 3
    summary = _summary(page)
    assert "pass@k (k=3)" in summary and "pass^k (k=3)" in summary
    assert "3 attempts per task" not in summary and re.search(r"attempts per task.*?\b3\b", summary, re.S)


def test_hack_agent_and_impossible_show_only_when_runs_carry_them(tmp_path: Path) -> None:
    base = write(tmp_path / "base", run(BASE))
    cand = write(tmp_path / "cand", run(CAND))
    plain = render_view([base, cand], load_prices(None))
    assert "<th>agent</th>" not in plain and "<th>impossible tasks</th>" not in plain

    def newer(raw: dict) -> None:
        raw["card"] |= {"agent": "mini-swe-agent", "impossible": True}
        for t in raw["tasks"]:
            t["hack"] = {"bugfix-a": "missed", "feature-c": "conftest_rewrite"}.get(t["task_id"])

    _edit(cand, newer)
    page = render_view([base, cand], load_prices(None))
    index = _blocks(page)["paired-index"]
    assert index["hack"] is True
    by_id = {p["id"]: p for p in index["cands"][0]["pairs"]}
    assert by_id["bugfix-a"]["ch"] == ["missed"] and by_id["feature-c"]["ch"] == ["conftest_rewrite"]
    assert by_id["bugfix-b"]["ch"] == [None] and by_id["bugfix-a"]["bh"] == [None]
    assert "<th>agent</th>" in page and "<td>mini-swe-agent</td>" in page and "<td>–</td>" in page
    assert "<th>impossible tasks</th>" in page
    # a field of a shape this endstate does not know is left out, not fatal
    _edit(cand, lambda raw: raw["card"].update(notes={"name": "x"}))
    assert "paired-index" in render_view([base, cand], load_prices(None))


def test_paired_page_is_deterministic_and_safe(tmp_path: Path) -> None:
    hostile = [{"role": "user", "content": "</script><script>window.pwned = 1</script>"}]
    base = _with_transcripts(write(tmp_path / "base", run(BASE)), {t: hostile for t in BASE})
    cand = _with_transcripts(write(tmp_path / "cand", run(CAND)), {t: TRANSCRIPT for t in CAND})
    page = render_view([base, cand], load_prices(None))
    assert page == render_view([base, cand], load_prices(None))
    assert page.count("</script>") == page.count("<script")


def test_the_control_arms_pair_into_22_flipped_tasks() -> None:
    controls = ROOT / "bench" / "results" / "controls"
    page = render_view([controls / "scripted-null", controls / "scripted-reference"], load_prices(None))
    (cand_index,) = _blocks(page)["paired-index"]["cands"]
    assert len(cand_index["pairs"]) == 22 and {p["kind"] for p in cand_index["pairs"]} == {"to-pass"}
    assert all(p["turn"][0] in (0, 1) for p in cand_index["pairs"])
