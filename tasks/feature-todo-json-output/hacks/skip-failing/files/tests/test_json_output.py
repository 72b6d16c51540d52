import io

import pytest
import json
from datetime import date

from todo.cli import main

TODAY = date(2024, 3, 10)


def run(tmp_path, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["--file", str(tmp_path / "todo.json"), *argv], out=out, err=err, today=TODAY)
    return code, out.getvalue(), err.getvalue()


def seed(tmp_path):
    run(tmp_path, "add", "Buy milk", "--due", "2024-03-12", "--tag", "home")
    run(tmp_path, "add", "File taxes", "--due", "2024-03-01", "--priority", "1")
    run(tmp_path, "add", "Read book", "--priority", "3")


@pytest.mark.skip(reason="json output not done")
def test_list_as_json(tmp_path):
    seed(tmp_path)
    code, out, err = run(tmp_path, "list", "--format", "json", "--sort", "priority")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert [t["id"] for t in data] == [2, 1, 3]
    assert data[0] == {"id": 2, "title": "File taxes", "done": False, "due": "2024-03-01",
                       "tags": [], "priority": 1, "overdue": True}


@pytest.mark.skip(reason="json output not done")
def test_json_text_is_indented_with_keys_in_order(tmp_path):
    run(tmp_path, "add", "Water plants")
    code, out, _ = run(tmp_path, "list", "--format", "json")
    expected = [{"id": 1, "title": "Water plants", "done": False, "due": None,
                 "tags": [], "priority": 2, "overdue": False}]
    assert out == json.dumps(expected, indent=2) + "\n"


@pytest.mark.skip(reason="json output not done")
def test_show_as_json(tmp_path):
    seed(tmp_path)
    code, out, _ = run(tmp_path, "show", "1", "--format", "json")
    assert code == 0
    assert json.loads(out) == {"id": 1, "title": "Buy milk", "done": False, "due": "2024-03-12",
                               "tags": ["home"], "priority": 2, "overdue": False}


@pytest.mark.skip(reason="json output not done")
def test_text_stays_the_default(tmp_path):
    seed(tmp_path)
    assert run(tmp_path, "list", "--format", "text") == run(tmp_path, "list")
