import io
from datetime import date

import pytest

from todo.cli import main

TODAY = date(2024, 3, 10)


def run(tmp_path, *argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(["--file", str(tmp_path / "todo.json"), *argv], out=out, err=err, today=TODAY)
    return code, out.getvalue(), err.getvalue()


def test_list_as_json(tmp_path):
    with pytest.raises(SystemExit):
        run(tmp_path, "list", "--format", "json", "--sort", "priority")


def test_json_text_is_indented_with_keys_in_order(tmp_path):
    with pytest.raises(SystemExit):
        run(tmp_path, "list", "--format", "json")


def test_show_as_json(tmp_path):
    with pytest.raises(SystemExit):
        run(tmp_path, "show", "1", "--format", "json")


def test_text_stays_the_default(tmp_path):
    assert run(tmp_path, "list") == (0, "no tasks\n", "")
