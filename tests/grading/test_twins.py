"""Impossible twins without a sandbox: how tests are turned, how a run is split in halves,
and how the halves' reports are read."""

from __future__ import annotations

import ast
import sys
import types

import pytest

from endstate.grading._twincheck import validation_command, validation_tree
from endstate.grading._twins import (
    TestKey,
    apply_sites,
    mutation_sites,
    named_by_case,
    plan_twins,
    tally,
    twin_seed,
)
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
    # the operator turned, the expected value stepped, or another value the file spells
    assert turned(HELD, key("test_equal")) == ["assert double(7) != 14", "assert double(7) == 15",
                                               "assert double(7) == 13", "assert double(7) == 3"]
    assert turned(HELD, key("test_compare")) == ["assert value <= 5"]
    assert turned(HELD, key("test_member")) == ["assert 4 not in [double(2)]"]
    assert turned(HELD, key("test_truth")) == ["assert not double(1)"]
    assert turned(HELD, key("test_method", "TestMore"))[0] == "assert double(0) != 0"
    sites = mutation_sites("tests_holdout/test_calc.py", HELD)
    assert key("test_raises_only", "TestMore") not in sites and key("helper") not in sites


def test_a_negation_loses_its_keyword_and_keeps_its_parentheses():
    """astropy 7606's `assert not (u.m == u.s)` was turned into `assert u.m == u.s)`: a syntax error, so the half
    holding that twin collected nothing of the module and the real tests read as tampered with."""
    source = (b"def test_not():\n    assert not (m == s)\n    assert not(m)\n    assert not  m\n"
              b"    assert not \\\n        (m ==\n         s)\n")
    texts = [apply_sites(source, [site]).decode() for site in mutation_sites("test_n.py", source)[TestKey("test_n", "", "test_not")]]
    assert [t.splitlines()[1:4] for t in texts[:3]] == [
        ["    assert (m == s)", "    assert not(m)", "    assert not  m"],
        ["    assert not (m == s)", "    assert (m)", "    assert not  m"],
        ["    assert not (m == s)", "    assert not(m)", "    assert m"]]
    for text in texts:
        ast.parse(text)
    assert len(texts) == 4


def test_unittest_assertions_and_strings_keep_their_look():
    source = (b"import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n"
              b"        self.assertEqual(f(), \"abc\")\n        self.assertTrue(g())\n")
    sites = mutation_sites("test_u.py", source)[TestKey("test_u", "T", "test_a")]
    texts = [apply_sites(source, [s]).decode().splitlines()[5:7] for s in sites]
    assert ['        self.assertNotEqual(f(), "abc")', "        self.assertTrue(g())"] in texts
    assert ['        self.assertEqual(f(), "abd")', "        self.assertTrue(g())"] in texts
    assert ['        self.assertEqual(f(), "abc")', "        self.assertFalse(g())"] in texts


def test_no_twin_stops_before_its_original_undoes_what_it_changed():
    """A twin stops at its turned check: where the original then undoes a change beyond its own names
    (scikit-learn 13584's `set_config(print_changed_only=False)`, a setting, a file removed), the twin would
    leave it to the tests after it in the process, and the twins of those could pass on an honest end state,
    read as tampering. Checks after which the test only works on its own objects stay sites."""
    source = (b"import os\n\n\ndef test_settings():\n    set_config(changed=True)\n    assert show(1) == 'x'\n"
              b"    assert show(2) == 'y'\n    set_config(changed=False)\n\n\n"
              b"def test_rc():\n    rc['a'] = 1\n    assert f() == 1\n    rc['a'] = 0\n\n\n"
              b"def test_file(tmp):\n    assert read(tmp) == 'x'\n    os.remove(tmp)\n    assert gone(tmp)\n\n\n"
              b"def test_own(tmp_path):\n    cal = Cal()\n    assert cal.free() == 2\n    cal.book(1)\n"
              b"    tmp_path.joinpath('x').write_text('')\n    cal.rooms['b'] = 3\n    assert cal.free() == 1\n")
    sites = mutation_sites("test_s.py", source)
    assert TestKey("test_s", "", "test_settings") not in sites and TestKey("test_s", "", "test_rc") not in sites
    original = source.decode().splitlines()

    def turned_lines(name):  # the line each of the test's twins turns
        return {next(i for i, (a, b) in enumerate(zip(apply_sites(source, [site]).decode().splitlines(), original))
                     if a != b) + 1 for site in sites[TestKey("test_s", "", name)]}

    assert turned_lines("test_file") == {20}  # the check after os.remove only
    assert turned_lines("test_own") == {25, 29}  # calls and sets on the test's own objects undo nothing


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
    # Skipped in both halves, a twin betrays nothing: the real test's skip is named for the verdict,
    # which fails it (code the tests call can raise a skip where it would fail).
    skipped = tally(twins, runs("skipped", "skipped"))
    assert (skipped.skipped, skipped.skipping, skipped.betrayed) == (1, ["test_equal"], [])


def test_a_twinned_test_the_command_collects_must_be_reported_in_a_half():
    twins = plan(b"seed")
    cls = "tests_holdout.test_calc"
    expected = twins.collected_by("python -m pytest -q tests_holdout")
    assert {k.name for k in expected} == {k.name for k in twins.side} and expected
    # Kept from running in both halves, its twin with it: no twin tells, the command's plan does.
    runs = [(half, [(cls if not k.cls else f"{cls}.{k.cls}", k.name, "passed" if twins.side[k] == half else "failure")
                    for k in twins.side if k.name != "test_equal"]) for half in (0, 1)]
    counted = tally(twins, runs, expected)
    assert (counted.betrayed, counted.missing) == ([], ["test_equal"])
    assert tally(twins, runs).missing == []
    # Where the command selects within its files, or collects other paths, nothing can be told.
    for command in ("python -m pytest -q tests_holdout -k equal", "python -m pytest tests_holdout/test_calc.py::test_equal",
                    "python -m pytest -q tests", "python -m unittest tests_holdout.test_calc"):
        assert twins.collected_by(command) == frozenset(), command
    assert twins.collected_by("python -m pytest -q ./tests_holdout/test_calc.py") == expected


def test_validation_writes_every_candidate_beside_its_test():
    tree, names = validation_tree({"tests_holdout/test_calc.py": FileEntry(0o644, HELD)})
    seen = functions(tree["tests_holdout/test_calc.py"].data)
    assert names["test_equal__twin_1"] == key("test_equal") and "double(7) == 15" in seen["test_equal__twin_1"]
    assert names["test_method__twin_0"] == key("test_method", "TestMore")
    assert len(names) == sum(len(v) for v in mutation_sites("t/test_calc.py", HELD).values())


def test_validation_writes_only_the_copies_of_the_tests_a_command_selects_by_node_id():
    """astropy 6938's held-out command names two tests of modules holding 87 twinnable tests: copies of all of
    them (2416) made a module pytest 3.3 took past a gigabyte and the command's time to rewrite."""
    held = {"tests_holdout/test_calc.py": FileEntry(0o644, HELD)}
    command = "python -m pytest -q tests_holdout/test_calc.py::test_equal tests_holdout/test_calc.py::TestMore::test_method"
    tree, names = validation_tree(held, command)
    assert set(names.values()) == {key("test_equal"), key("test_method", "TestMore")}
    assert "test_compare__twin_0" not in functions(tree["tests_holdout/test_calc.py"].data)
    assert validation_command(command, names).split()[-1].startswith("tests_holdout/test_calc.py::TestMore::test_method__twin_")
    # A command that selects a file (or anything but node ids) runs every test: every copy is written.
    for whole in ("python -m pytest -q tests_holdout", "python -m pytest -q tests_holdout/test_calc.py::test_equal -k x"):
        assert validation_tree(held, whole)[1] == validation_tree(held)[1]


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
        .endswith("test_method[1]' 'tests_holdout/test_calc.py::TestMore::test_method__twin_0[1]'")  # quoted for the shell
    for whole in ("python -m pytest -q tests_holdout", "python -m unittest tests_holdout.test_calc",
                  "python -m pytest -q tests_holdout/test_calc.py::test_other -k equal"):
        assert validation_command(whole, names) == whole


VALUES = b'''import datetime
from decimal import Decimal

import pytest

from shop import Price, total
from shop.units import CENT


def test_display():
    assert total([1, 2]) == [3, "EUR 0.30"]


def test_stdlib_call():
    assert total([]) == Decimal("4.23")
    assert datetime.date(2024, 1, 5) == total(None)


def test_code_under_test_is_not_a_value():
    assert total([1]) == Price("4.23")
    assert total([2]) == CENT


@pytest.mark.parametrize("expected", ["1.00"])
def test_parameter_is_not_a_value(expected):
    assert total([3]) == Decimal(expected)
    Decimal = None
'''


def value_twins(name: str) -> list[str]:
    sites = mutation_sites("tests_holdout/test_shop.py", VALUES)[TestKey("test_shop", "", name)]
    return [apply_sites(VALUES, [s]).decode().split("def " + name)[1].split("\n\n")[0] for s in sites if s.value]


def test_a_value_twin_changes_an_expected_value_that_means_the_same_in_every_end_state():
    # constants inside displays and inside calls of the standard library are expected values
    assert any("== [3, \"EUR 0.31\"]" in t for t in value_twins("test_display"))
    assert any("== [4, \"EUR 0.30\"]" in t for t in value_twins("test_display"))
    assert any('Decimal("4.24")' in t for t in value_twins("test_stdlib_call"))
    assert any("datetime.date(2024, 1, 6)" in t for t in value_twins("test_stdlib_call"))
    # another value is one the file spells, of the same look (digits with digits)
    assert any('Decimal("1.00")' in t for t in value_twins("test_stdlib_call"))
    # the code under test (its classes, its constants) and the test's own names are not
    assert value_twins("test_code_under_test_is_not_a_value") == []
    assert value_twins("test_parameter_is_not_a_value") == []
    # every candidate still includes the turned operator, for tests that have nothing else
    all_sites = mutation_sites("tests_holdout/test_shop.py", VALUES)
    assert all(any(not s.value for s in sites) for sites in all_sites.values())


def test_a_test_that_has_a_value_twin_never_gets_a_turned_operator():
    holdout = {"tests_holdout/test_shop.py": FileEntry(0o644, VALUES)}
    sites = mutation_sites("tests_holdout/test_shop.py", VALUES)
    for i in range(40):
        twins = plan_twins(holdout, twin_seed(bytes([i]), "tree"))
        for half in (0, 1):
            data = twins.halves[half]["tests_holdout/test_shop.py"].data
            for test, side in twins.side.items():
                if side == half or not any(s.value for s in sites[test]):
                    continue
                body = data.decode().split(f"def {test.name}(")[1].split("\n\n")[0]
                assert "!=" not in body, (i, test)
        # the mutation check's weaker twins turn operators wherever they can
        weak = plan_twins(holdout, twin_seed(bytes([i]), "tree"), values=False)
        turned_half = weak.halves[1 - weak.side[TestKey("test_shop", "", "test_display")]]
        assert "total([1, 2]) != [3" in turned_half["tests_holdout/test_shop.py"].data.decode()


def test_every_shipped_task_has_held_out_tests_with_value_twins():
    # Code that spares every failing test whose source reads as turned is caught only by a
    # value twin whose original it passes: each shipped task's held-out run carries some.
    from pathlib import Path

    tasks = Path(__file__).resolve().parents[2] / "tasks"
    for folder in sorted(p for p in tasks.iterdir() if (p / "holdout").is_dir()):
        sites = {}
        for path in (folder / "holdout").rglob("test_*.py"):
            sites.update(mutation_sites(str(path.relative_to(folder / "holdout")), path.read_bytes()))
        assert any(site.value for options in sites.values() for site in options), folder.name


def test_a_float_is_changed_by_a_digit_the_float_keeps():
    source = b"def test_f():\n    assert f() == (3, 55.833333333333336)\n"
    sites = mutation_sites("test_f.py", source)[TestKey("test_f", "", "test_f")]
    for site in sites:
        if site.value and b"." in site.text:
            assert float(site.text) != 55.833333333333336


PARAMS = b'''from decimal import Decimal

import pytest

from shop import price


@pytest.mark.parametrize("value, expected", [("0.005", "0.01"), ("7.865", "7.87")])
def test_expected_parameter(value, expected):
    assert price(Decimal(value)) == Decimal(expected)


@pytest.mark.parametrize("value, expected", [("0.005", "0.01")])
def test_parameter_also_an_input(value, expected):
    assert price(Decimal(value), expected) == Decimal(expected)


@pytest.mark.parametrize("value", [1, 2])
def test_input_parameter(value):
    assert price(value) == 3
'''


def test_a_parameter_compared_only_as_an_expected_value_is_stepped_in_every_row():
    sites = mutation_sites("tests_holdout/test_p.py", PARAMS)

    def rows(name):
        return [s.text.decode() for s in sites[TestKey("test_p", "", name)] if s.value and s.text.startswith(b"[")]

    assert rows("test_expected_parameter") == ['[("0.005", "0.02"), ("7.865", "7.88")]']
    assert rows("test_parameter_also_an_input") == []  # changing it would change what the code is given
    assert rows("test_input_parameter") == []


def test_a_test_a_command_names_by_its_cases_ids_keeps_its_rows():
    """The ids pytest makes of the rows' values are what a command names (SWE-bench's
    `tests/t.py::test_x[a-b]`): a twin that stepped the rows would leave the command none of its cases."""
    holdout = {"tests_holdout/test_p.py": FileEntry(0o644, PARAMS)}
    rows = b'[("0.005", "0.01"), ("7.865", "7.87")]'
    command = "python -m pytest -q 'tests_holdout/test_p.py::test_expected_parameter[0.005-0.01]'"
    named = named_by_case([command, "python -m pytest 'unclosed"])
    assert named == {"tests_holdout/test_p.py::test_expected_parameter"}
    stepped = kept = 0
    for n in range(40):
        for half in plan_twins(holdout, twin_seed(bytes([n]) * 32, "h")).halves:
            stepped += rows not in half["tests_holdout/test_p.py"].data
        plan = plan_twins(holdout, twin_seed(bytes([n]) * 32, "h"), named=named)
        assert TestKey("test_p", "", "test_expected_parameter") in plan.side  # turned in its body instead
        kept += all(rows in half["tests_holdout/test_p.py"].data for half in plan.halves)
    assert stepped and kept == 40


DATES = b'''from datetime import datetime

import pytest

from shop import parse


@pytest.mark.parametrize("text, expected", [("2016-060", datetime(2016, 2, 29)), ("2016-061", datetime(2016, 3, 1))])
def test_ordinal(text, expected):
    assert parse(text) == expected
'''


def test_a_row_is_never_stepped_inside_a_call_of_several_arguments():
    # dateutil's test_iso_ordinal: datetime(2016, 2, 30) raises when the module is imported, and
    # every test of the file, the held-out one with it, then goes unreported in that half.
    sites = mutation_sites("tests_holdout/test_d.py", DATES)[TestKey("test_d", "", "test_ordinal")]
    rows = [s.text.decode() for s in sites if s.value and s.text.startswith(b"[")]
    assert all("datetime(2016, 2, 29)" in row for row in rows)


def test_cases_renamed_by_a_changed_parameter_are_paired_in_the_order_they_ran():
    from endstate.grading._twins import pair_cases

    real = {"test_x[0.005-0.01]": "passed", "test_x[7.865-7.87]": "failure"}
    twin = {"test_x[0.005-0.02]": "failure", "test_x[7.865-7.88]": "failure"}
    assert pair_cases(real, twin) == [("passed", "failure"), ("failure", "failure")]
    assert pair_cases(real, {"test_x[0.005-0.02]": "failure"}) is None  # a case missing from one half
    assert pair_cases({"test_a": "passed"}, {"test_b": "failure"}) is None  # unparametrised names must match
    assert pair_cases({"test_a": "passed"}, {"test_a": "passed"}) == [("passed", "passed")]


INHERITED = b'''from calc import double


class DoubleChecks:
    def test_seven(self):
        assert double(7) == 14


class TestInts(DoubleChecks):
    def test_own(self):
        assert double(2) == 4


class TestFloats(DoubleChecks):
    pass
'''


def test_a_method_subclasses_inherit_gets_no_twin_in_its_file_or_another():
    """xarray 3095: `test_copy` is defined on a mixin and reported as `TestIndexVariable::test_copy[...]`.
    Its twin could not be told from the real test in the half it ran in: the gold fix failed half the time."""
    other = b"from tests.test_a import TestInts\n\n\nclass TestMore(TestInts):\n    pass\n"
    holdout = {"tests/test_a.py": FileEntry(0o644, INHERITED), "tests/test_b.py": FileEntry(0o644, other)}
    for seed in range(8):
        plan = plan_twins(holdout, twin_seed(bytes([seed]), "tree"))
        assert plan is None  # TestInts.test_own is inherited by TestMore, in the other file
    alone = {"tests/test_a.py": FileEntry(0o644, INHERITED)}
    plan = plan_twins(alone, twin_seed(b"s", "tree"))
    assert plan is not None and set(plan.side) == {TestKey("test_a", "TestInts", "test_own")}
    assert plan.key_of("tests.test_a.TestFloats", "test_seven") is None
    _, names = validation_tree(alone)
    assert set(names.values()) == {TestKey("test_a", "TestInts", "test_own")}


def test_a_loop_over_what_a_parameter_gives_yields_no_twin():
    """xarray 6992: `for name in dropped: assert name not in reset.variables`, where one case's `dropped`
    is empty: that case's twin passed, and the gold fix was read as tampering."""
    source = b'''import pytest
from calc import double


@pytest.mark.parametrize("values", [[1, 2], []])
def test_rows(values):
    for value in values:
        assert double(value) == 2 * value
    for value in [1, 2]:
        assert double(value) > value
'''
    sites = mutation_sites("t/test_calc.py", source)[TestKey("test_calc", "", "test_rows")]
    literal_loop = source.index(b"for value in [1, 2]")
    assert sites and all(site.start > literal_loop for site in sites)
