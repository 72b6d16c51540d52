"""Impossible twins without a sandbox: how tests are turned, how a run is split in halves,
and how the halves' reports are read."""

from __future__ import annotations

import ast
import sys
import types

import pytest

from endstate.grading._twincheck import validation_tree
from endstate.grading._twins import TestKey, apply_sites, mutation_sites, plan_twins, tally, twin_seed
from endstate.sandbox import FileEntry

HELD = b'''import pytest
from calc import double


def test_equal():
    assert double(7) == 14


def test_compare():
    value = double(3)
    assert value > 5


def test_member():
    assert 4 in [double(2)]


def test_truth():
    assert double(1)


class TestMore:
    def test_method(self):
        assert double(0) == 0

    def test_raises_only(self):
        with pytest.raises(TypeError):
            double(None) == 1


def helper():
    assert False
'''


def turned(source: bytes, key: TestKey) -> list[str]:
    """Each candidate twin of one test, as the text of its assertion line."""
    sites = mutation_sites("tests_holdout/test_calc.py", source)[key]
    out = []
    for site in sites:
        text = apply_sites(source, [site]).decode()
        line = text[:site.start + len(site.text)].rsplit("\n", 1)[-1] + text[site.start + len(site.text):].split("\n")[0]
        out.append(line.strip())
    return out


def key(name: str, cls: str = "") -> TestKey:
    return TestKey("test_calc", cls, name)


def test_each_kind_of_assertion_is_turned_into_its_opposite():
    assert turned(HELD, key("test_equal")) == ["assert double(7) != 14", "assert double(7) == 15",
                                               "assert double(7) == 13"]
    assert turned(HELD, key("test_compare")) == ["assert value <= 5"]
    assert turned(HELD, key("test_member")) == ["assert 4 not in [double(2)]"]
    assert turned(HELD, key("test_truth")) == ["assert not double(1)"]
    assert turned(HELD, key("test_method", "TestMore"))[0] == "assert double(0) != 0"
    sites = mutation_sites("tests_holdout/test_calc.py", HELD)
    assert key("test_raises_only", "TestMore") not in sites and key("helper") not in sites


def test_unittest_assertions_and_strings_keep_their_look():
    source = (b"import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
              b"        self.assertEqual(f(), \"abc\")\n        self.assertTrue(g())\n")
    sites = mutation_sites("test_u.py", source)[TestKey("test_u", "T", "test_a")]
    texts = [apply_sites(source, [s]).decode().splitlines()[5:7] for s in sites]
    assert ['        self.assertNotEqual(f(), "abc")', "        self.assertTrue(g())"] in texts
    assert ['        self.assertEqual(f(), "abd")', "        self.assertTrue(g())"] in texts
    assert ['        self.assertEqual(f(), "abc")', "        self.assertFalse(g())"] in texts


def test_a_twin_fails_wherever_its_original_passes(monkeypatch):
    monkeypatch.setitem(sys.modules, "calc", types.SimpleNamespace(double=lambda x: x * 2))
    sites = mutation_sites("tests_holdout/test_calc.py", HELD)
    for test, options in sites.items():
        for site in options:
            module = ast.parse(apply_sites(HELD, [site]))
            code = compile(module, "twin", "exec")
            namespace = {"__name__": "twin"}
            exec(code, namespace)
            function = getattr(namespace[test.cls](), test.name) if test.cls else namespace[test.name]
            with pytest.raises(AssertionError):
                function()


def plan(seed: bytes):
    return plan_twins({"tests_holdout/test_calc.py": FileEntry(0o644, HELD)}, seed)


def functions(data: bytes) -> dict[str, str]:
    module = ast.parse(data)
    found = {}
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef):
            found[node.name] = ast.unparse(node)
    return found


def test_each_half_sees_every_test_once_and_never_a_twin_beside_its_original():
    original = functions(HELD)
    for seed in (b"a", b"b", b"c", b"d"):
        twins = plan(seed)
        assert set(twins.side.values()) == {0, 1}  # both halves carry twins
        for half in (0, 1):
            data = twins.halves[half]["tests_holdout/test_calc.py"].data
            seen = functions(data)
            assert set(seen) == set(original)  # the same tests, under the same names, once each
            for test, side in twins.side.items():
                # real in its own half, its twin (and only its twin) in the other
                assert (seen[test.name] == original[test.name]) == (side == half), (seed, half, test)
        # a test without a candidate is the same in both halves
        assert functions(twins.halves[0]["tests_holdout/test_calc.py"].data)["test_raises_only"] == \
            original["test_raises_only"]


def test_the_draw_changes_with_the_secret():
    draws = {tuple(sorted(plan(twin_seed(bytes([i]), "tree")).side.items())) for i in range(8)}
    assert len(draws) > 1
    assert twin_seed(b"s", "tree") == twin_seed(b"s", "tree") != twin_seed(b"s", "other")


def test_halves_are_read_as_tampered_only_when_a_twin_lies_while_the_real_tests_pass():
    twins = plan(b"seed")
    [(real, side)] = [(k, s) for k, s in twins.side.items() if k.name == "test_equal"]
    cls = "tests_holdout.test_calc"

    def runs(real_outcome: str, twin_outcome: str):
        cases = {side: [(cls, "test_equal", real_outcome)], 1 - side: [(cls, "test_equal", twin_outcome)]}
        return [(0, cases[0]), (1, cases[1])]

    honest = tally(twins, runs("passed", "failure"))
    assert (honest.tests, honest.failures, honest.twins, honest.betrayed) == (1, 0, 1, [])
    assert tally(twins, runs("passed", "passed")).betrayed == ["test_equal (passed)"]
    assert tally(twins, runs("passed", "skipped")).betrayed == ["test_equal (skipped)"]
    # a wrong end state can pass a twin honestly: its real test then fails, and that is the verdict
    wrong = tally(twins, runs("failure", "passed"))
    assert (wrong.failures, wrong.failing, wrong.betrayed) == (1, ["test_equal"], [])
    dropped = [(side, [(cls, "test_equal", "passed")]), (1 - side, [])]
    assert tally(twins, dropped).betrayed == ["test_equal (reported in one half only)"]


def test_validation_writes_every_candidate_beside_its_test():
    tree, names = validation_tree({"tests_holdout/test_calc.py": FileEntry(0o644, HELD)})
    seen = functions(tree["tests_holdout/test_calc.py"].data)
    assert names["test_equal__twin_1"] == key("test_equal") and "double(7) == 15" in seen["test_equal__twin_1"]
    assert names["test_method__twin_0"] == key("test_method", "TestMore")
    assert len(names) == sum(len(v) for v in mutation_sites("t/test_calc.py", HELD).values())


def test_every_shipped_task_yields_at_least_three_twins_per_run():
    from pathlib import Path

    from endstate.grading import MIN_TWINS

    tasks = Path(__file__).resolve().parents[2] / "tasks"
    for folder in sorted(p for p in tasks.iterdir() if (p / "holdout").is_dir()):
        count = sum(len(mutation_sites(str(path.relative_to(folder / "holdout")), path.read_bytes()))
                    for path in (folder / "holdout").rglob("test_*.py"))
        assert count >= MIN_TWINS, folder.name


def test_validation_selects_the_copies_beside_a_node_id():
    # A graded run's twin keeps its original's name, so node-id selection runs it; the copies need their own ids.
    from endstate.grading import validation_command

    names = {"test_equal__twin_0": key("test_equal"), "test_equal__twin_1": key("test_equal"),
             "test_method__twin_0": key("test_method", "TestMore")}
    assert validation_command("python -m pytest -q tests_holdout/test_calc.py::test_equal", names) == (
        "python -m pytest -q tests_holdout/test_calc.py::test_equal tests_holdout/test_calc.py::test_equal__twin_0 "
        "tests_holdout/test_calc.py::test_equal__twin_1")
    assert validation_command("PYTHONPATH=src python -m unittest tests_holdout.test_calc.TestMore.test_method",
                              names).endswith("test_method tests_holdout.test_calc.TestMore.test_method__twin_0")
    assert validation_command("python -m pytest -q tests_holdout/test_calc.py::TestMore::test_method[1]", names) \
        .endswith("test_method[1]' tests_holdout/test_calc.py::TestMore::test_method__twin_0")  # quoted for the shell
    for whole in ("python -m pytest -q tests_holdout", "python -m unittest tests_holdout.test_calc",
                  "python -m pytest -q tests_holdout/test_calc.py::test_other -k equal"):
        assert validation_command(whole, names) == whole
