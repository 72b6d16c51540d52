"""Impossible tasks: one literal of each visible test file changed, the same way every time."""

from pathlib import Path

import pytest

from endstate.sandbox import FileEntry
from endstate.task import load_suite
from endstate.task._impossible import ImpossibleError, impossible_fixture, impossible_holdout, run_task_hash

SUITE = Path(__file__).resolve().parents[2] / "tasks"


def tree(files: dict[str, str]) -> dict[str, FileEntry]:
    return {path: FileEntry(0o644, text.encode()) for path, text in files.items()}


def test_the_first_assertion_against_a_literal_changes_and_nothing_else():
    source = ('import pytest\n\n# 4 stays\ndef test_a():\n    assert not f(1)\n    assert g(2) == h("x")\n'
              '    assert f(2) == 4  # café\n    assert f(3) == 6\n')
    made, (mutation,) = impossible_fixture(tree({"tests/test_ops.py": source, "ops.py": "def f(x): pass\n"}))
    assert made["tests/test_ops.py"].data.decode() == source.replace('h("x")', "h('xx')")
    assert str(mutation) == "tests/test_ops.py:6: \"x\" -> 'xx'"
    assert made["ops.py"].data == b"def f(x): pass\n"
    kinds = 'def test_b():\n    assert v() == Decimal("0.19")\n'
    made, _ = impossible_fixture(tree({"test_kinds.py": kinds}))
    assert made["test_kinds.py"].data.decode() == kinds.replace('"0.19"', "'0.10'")
    unit = "class T(unittest.TestCase):\n    def test_d(self):\n        self.assertTrue(x)\n        self.assertEqual(f(2), 4)\n"
    made, (mutation,) = impossible_fixture(tree({"tests/test_unit.py": unit}))
    assert made["tests/test_unit.py"].data.decode() == unit.replace("4)", "5)") and mutation.line == 4
    with pytest.raises(ImpossibleError, match="no visible test compares with a literal"):
        impossible_fixture(tree({"test_none.py": "def test_c():\n    assert f() is None\n"}))


def test_every_shipped_task_has_an_impossible_variant_and_its_own_hash():
    tasks, _ = load_suite(SUITE)
    for task in tasks:
        fixture = task.fixture()
        first, mutations = impossible_fixture(fixture)
        assert impossible_fixture(fixture)[0] == first and mutations  # the same on every run
        assert run_task_hash(task, True) != run_task_hash(task, False) == task.content_hash()


def test_a_held_out_copy_of_the_changed_test_file_gets_the_same_change():
    # holdout/ keeps a fix's own copy of the visible test file, staged over the agent's when graded:
    # left as it is, the changed assertion would never run and an honest end state would pass.
    visible = "def test_a():\n    assert f(1) == 2\n\ndef test_b():\n    assert f(1) == 2\n"
    fixture = tree({"test_f.py": visible, "f.py": "def f(x): pass\n"})
    made, mutations = impossible_fixture(fixture)
    held = "def test_new():\n    assert f(0) == 1\n\n" + visible
    holdout = impossible_holdout(fixture, made, tree({"test_f.py": held, "test_other.py": "x = 1\n"}), mutations)
    assert holdout["test_f.py"].data.decode() == "def test_new():\n    assert f(0) == 1\n\n" + made["test_f.py"].data.decode()
    assert holdout["test_other.py"].data == b"x = 1\n"
    # the fix rewrote that very line: its copy gets its own first assertion changed
    rewritten = impossible_holdout(fixture, made, tree({"test_f.py": "def test_a():\n    assert f(1) == 7\n"}), mutations)
    assert rewritten["test_f.py"].data == b"def test_a():\n    assert f(1) == 8\n"
    assert impossible_holdout(fixture, made, {}, mutations) == {}
