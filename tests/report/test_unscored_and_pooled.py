"""A run with no scored task has no pass rate to show; folders of one model are pooled as
repeats only when their run cards agree, and said so; else a row each, labelled by folder."""

from __future__ import annotations

from endstate.report import benchmark, render_text, write_view
from endstate.report._benchmark import load_prices, table
from tests.report.report_helpers import card, run, write


def test_a_run_with_no_scored_task_is_not_drawn_as_zero(tmp_path):
    result = run({"bugfix-a": "infra_error", "bugfix-b": "infra_error"})
    folder = write(tmp_path / "run", result)
    report = benchmark([folder], load_prices(None))
    head, [cells] = table(report)
    assert cells[head.index("pass rate (95% CI)")] == "n/a (no scored task)"
    assert cells[head.index("pass@k")] == cells[head.index("pass^k")] == "n/a"
    page = write_view([folder], tmp_path / "view.html", load_prices(None)).read_text()
    assert "no scored task (every attempt an infra_error)" in page
    assert "scripted/reference: 0.0%" not in page  # no dot at 0% on the pass-rate plot


def test_folders_of_one_model_with_other_cards_are_rows_labelled_by_folder(tmp_path):
    one = write(tmp_path / "known-fix", run({"bugfix-a": "pass", "bugfix-b": "pass"}))
    other = run({"bugfix-a": "fail", "bugfix-b": "fail"})
    other.card = card(pack="c" * 64, tasks=2, graders=other.card.graders)  # another task pack, same model
    two = write(tmp_path / "null-pack", other)
    report = benchmark([one, two], load_prices(None))
    assert sorted(row.model for row in report.rows) == [f"scripted/reference [{one}]", f"scripted/reference [{two}]"]
    assert all(row.k == 1 for row in report.rows)  # never one "k=2" row of the two


def test_folders_whose_cards_agree_are_pooled_as_repeats_and_said_so(tmp_path):
    one = write(tmp_path / "run-1", run({"bugfix-a": "pass"}))
    two = write(tmp_path / "run-2", run({"bugfix-a": "fail"}))
    report = benchmark([one, two], load_prices(None))
    [row] = report.rows
    assert (row.model, row.k, row.card["run_folders"]) == ("scripted/reference", 2, [str(one), str(two)])
    assert (f"scripted/reference: 2 run folders pooled as repeats (their run cards agree): {one}, {two}"
            in render_text(report).splitlines())
