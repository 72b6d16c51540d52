import io
import json
from datetime import date

import pytest

from todo.cli import main

TODAY = date(2024, 6, 15)


def run(tmp_path, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["--file", str(tmp_path / "tasks.json"), *argv], out=out, err=err, today=TODAY)
    return code, out.getvalue(), err.getvalue()


def test_no_matches_prints_an_empty_array(tmp_path):
    run(tmp_path, "add", "Open thing")
    assert run(tmp_path, "list", "--status", "done", "--format", "json") == (0, "[]\n", "")


def test_filters_apply_and_done_tasks_are_never_overdue(tmp_path):
    run(tmp_path, "add", "Renew passport", "--due", "2024-06-01", "--tag", "admin")
    run(tmp_path, "add", "Book dentist", "--due", "2024-06-10", "--tag", "admin")
    run(tmp_path, "add", "Paint fence", "--due", "2024-06-01", "--tag", "garden")
    run(tmp_path, "done", "1")
    _, out, _ = run(tmp_path, "list", "--status", "all", "--tag", "admin", "--format", "json")
    data = json.loads(out)
    assert [(t["id"], t["done"], t["overdue"]) for t in data] == [(1, True, False), (2, False, True)]


def test_sort_by_due_puts_undated_last(tmp_path):
    run(tmp_path, "add", "No date")
    run(tmp_path, "add", "Later", "--due", "2024-07-01")
    run(tmp_path, "add", "Sooner", "--due", "2024-06-20")
    _, out, _ = run(tmp_path, "list", "--sort", "due", "--format", "json")
    assert [t["title"] for t in json.loads(out)] == ["Sooner", "Later", "No date"]


def test_show_json_exact_text_keeps_tag_order_and_unicode(tmp_path):
    run(tmp_path, "add", "Café run", "--tag", "zeta", "--tag", "alpha", "--priority", "3")
    code, out, err = run(tmp_path, "show", "1", "--format", "json")
    expected = {"id": 1, "title": "Café run", "done": False, "due": None,
                "tags": ["zeta", "alpha"], "priority": 3, "overdue": False}
    assert (code, err) == (0, "")
    assert out == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    assert "\\u00e9" not in out


def test_show_json_unknown_id_writes_nothing_to_stdout(tmp_path):
    run(tmp_path, "add", "Only one")
    assert run(tmp_path, "show", "9", "--format", "json") == (1, "", "error: no task with id 9\n")


def test_unknown_format_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        run(tmp_path, "list", "--format", "yaml")
    assert exc.value.code == 2


def test_show_text_is_unchanged_by_default(tmp_path):
    run(tmp_path, "add", "Plain", "--due", "2024-06-14")
    _, out, _ = run(tmp_path, "show", "1", "--format", "text")
    assert "status   overdue\n" in out
    assert out == run(tmp_path, "show", "1")[1]
