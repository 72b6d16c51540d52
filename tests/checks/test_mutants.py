"""Mutants and rewrites of a reference: made from the code the fix changed, deterministic."""

from __future__ import annotations

import ast

from endstate.checks._mutants import file_diff, mutants_of, rewrites_of
from endstate.sandbox import FileEntry

BEFORE = '''"""Windows of time."""
import math


def in_window(t, start, end):
    inside = start <= t <= end
    return inside


def untouched(a, b):
    return a - b < 3
'''
AFTER = BEFORE.replace("start <= t <= end", "start <= t < end")


def test_mutants_change_only_the_fixed_lines_and_get_ids_a_person_can_find():
    fixture, solution = {"pkg/w.py": FileEntry(0o644, BEFORE.encode())}, {"pkg/w.py": FileEntry(0o644, AFTER.encode())}
    made = mutants_of(fixture, solution)
    # In order of line, column and operator; `untouched` (outside the fix) gets none. The boundary
    # moved back to the fixture's `<=` is the fixture itself, not a mutant of the fix.
    assert [m.id for m in made] == ["pkg/w.py:6:4:remove-statement", "pkg/w.py:6:13:Lt>GtE",
                                    "pkg/w.py:6:13:LtE>Gt", "pkg/w.py:6:13:LtE>Lt"]
    assert [m.id for m in mutants_of(fixture, solution)] == [m.id for m in made]
    diff = file_diff("pkg/w.py", AFTER.encode(), made[3].source)
    assert "-    inside = start <= t < end\n+    inside = start < t < end\n" in diff
    assert diff.count("\n-") == 1  # one line changes, the rest of the file is as it was
    # Only Python source is mutated.
    assert mutants_of({"w.txt": fixture["pkg/w.py"]}, {"w.txt": solution["pkg/w.py"]}) == []


def test_every_mutant_parses_to_exactly_the_change_it_names():
    before = "def f(xs, n):\n    return xs\n"
    after = ("def f(xs, n):\n    total = 0\n    for x in xs:\n        if x % 2 == 0 and not x > n:\n"
             "            total += x * 2 - 1\n    return max(total, n)\n")
    made = mutants_of({"m.py": FileEntry(0o644, before.encode())}, {"m.py": FileEntry(0o644, after.encode())})
    operators = {m.id.split(":", 3)[3] for m in made}
    for expected in ("Eq>NotEq", "And>Or", "drop-Not", "Gt>GtE", "Mod>FloorDiv", "Add=>Sub=", "+1", "-1",
                     "swap-args-1-2", "return-None", "if-True", "if-False", "Mult>Div", "swap-operands"):
        assert expected in operators, expected
    for mutant in made:
        ast.parse(mutant.source)
    assert len({m.source for m in made}) == len(made)  # no two mutants leave the same file


def test_test_files_and_unchanged_files_make_no_mutants():
    fixture = {"tests/test_w.py": FileEntry(0o644, BEFORE.encode()), "pkg/same.py": FileEntry(0o644, b"x = 1 < 2\n")}
    solution = {"tests/test_w.py": FileEntry(0o644, AFTER.encode()), "pkg/same.py": fixture["pkg/same.py"]}
    assert mutants_of(fixture, solution) == []


def test_rewrites_keep_the_meaning():
    fixture, solution = {"w.py": FileEntry(0o644, BEFORE.encode())}, {"w.py": FileEntry(0o644, AFTER.encode())}
    rewrites = {r.id: r.source.decode() for r in rewrites_of(fixture, solution)}
    assert set(rewrites) == {"w.py:5:rename-locals:in_window"}
    renamed = rewrites["w.py:5:rename-locals:in_window"]
    assert "    inside_r = start <= t < end\n    return inside_r\n" in renamed
    assert "def in_window(t, start, end):" in renamed  # parameters keep their names: callers pass them by keyword
    one_op = AFTER.replace("start <= t < end", "t < end")
    rewrites = {r.id: r.source.decode() for r in rewrites_of(fixture, {"w.py": FileEntry(0o644, one_op.encode())})}
    assert "    inside = end > t\n" in rewrites["w.py:mirror-comparisons"]
    assert "return a - b < 3" in rewrites["w.py:mirror-comparisons"]  # outside the fix: as it was
