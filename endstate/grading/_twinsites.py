"""Where a held-out test can be turned into its impossible twin (see `_twins.py`).

Every candidate is one edit of a test file's bytes: an operator turned into its
complement, an expected value changed (`_expected.py` says which values may be), or the
rows of a parametrised expected value stepped. Only the checks a passing run of the test
certainly executes are turned, so every candidate fails wherever its original passes,
which `tasks check` proves on `solution/` for each one.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

from endstate.grading._expected import Scope, fixed, other_constants, parametrize_rows, scope_of, within
from endstate.task import parse_python

__all__ = ["TestKey", "Site", "mutation_sites", "apply_sites", "base_classes"]


class TestKey(NamedTuple):
    """A test function: its file's name without `.py`, its class (or ""), its name."""

    __test__ = False

    module: str
    cls: str
    name: str


class Site(NamedTuple):
    """One way to turn a test: replace bytes [start, end) of its file with `text`."""

    start: int
    end: int
    text: bytes
    #: The twin keeps the comparison and changes a value it expects, so its failure reads like a
    #: real one. A turned operator (`!=`, `not in`, `assert not`) is plain to see in the source
    #: a test process can read; a changed expected value is not.
    value: bool = False
    #: The twin changes the rows of a `parametrize` list, and with them the ids pytest makes of
    #: their values: a command that names those ids would find none of the twin's cases.
    renames: bool = False


_COMPLEMENT = {ast.Eq: "!=", ast.NotEq: "==", ast.Lt: ">=", ast.GtE: "<", ast.Gt: "<=", ast.LtE: ">",
               ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}
_OPERATOR = {ast.Eq: r"==", ast.NotEq: r"!=", ast.Lt: r"(?<![<>=!])<(?![<=])", ast.GtE: r">=",
             ast.Gt: r"(?<![<>=!-])>(?![>=])", ast.LtE: r"<=", ast.In: r"(?<!not )\bin\b",
             ast.NotIn: r"\bnot\s+in\b", ast.Is: r"\bis\b(?!\s+not\b)", ast.IsNot: r"\bis\s+not\b"}
_OPPOSITE_METHOD = {"assertEqual": "assertNotEqual", "assertTrue": "assertFalse", "assertIn": "assertNotIn",
                    "assertIs": "assertIsNot", "assertIsNone": "assertIsNotNone",
                    "assertIsInstance": "assertNotIsInstance", "assertGreater": "assertLessEqual",
                    "assertLess": "assertGreaterEqual", "assertAlmostEqual": "assertNotAlmostEqual",
                    "assertRegex": "assertNotRegex"}
_OPPOSITE_METHOD.update({v: k for k, v in list(_OPPOSITE_METHOD.items())})
#: Operands that read the same with a `not ` in front; anything else is wrapped in parentheses.
_TIGHT = (ast.Name, ast.Call, ast.Attribute, ast.Subscript, ast.Constant)


class _Source:
    """Byte offsets of AST positions (col_offset counts UTF-8 bytes)."""

    def __init__(self, data: bytes):
        self.data = data
        self.lines = [0]
        for line in data.splitlines(keepends=True):
            self.lines.append(self.lines[-1] + len(line))

    def start(self, node: ast.AST) -> int:
        return self.lines[node.lineno - 1] + node.col_offset

    def end(self, node: ast.AST) -> int:
        return self.lines[node.end_lineno - 1] + node.end_col_offset

    def text(self, node: ast.AST) -> bytes:
        return self.data[self.start(node):self.end(node)]


def _value_sites(src: _Source, side: ast.expr, scope: Scope) -> list[Site]:
    """Twins that change one constant of an expected value that means the same in every end state."""
    if not fixed(side, scope):
        return []
    sites = []
    for node in ast.walk(side):
        if isinstance(node, ast.Constant):
            # the file's other values, nearest first: a changed value reads like its neighbours
            # (not its own line's: an expected value equal to an input beside it would stand out)
            near = sorted((seen for seen in scope.pool.get(type(node.value), []) if seen[0] != node.lineno),
                          key=lambda seen: abs(seen[0] - node.lineno))
            pool = list(dict.fromkeys(value for _, value in near))
            sites += [Site(src.start(node), src.end(node), other, True)
                      for other in other_constants(node, src.text(node), pool)]
    return sites


def _assert_sites(src: _Source, test: ast.expr, scope: Scope) -> list[Site]:
    sites = []
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op = type(test.ops[0])
        left_end, right = src.end(test.left), test.comparators[0]
        between = src.data[left_end:src.start(right)].decode("utf-8", "replace")
        found = list(re.finditer(_OPERATOR[op], between))
        if len(found) == 1:
            start = left_end + len(between[:found[0].start()].encode())
            end = left_end + len(between[:found[0].end()].encode())
            sites.append(Site(start, end, _COMPLEMENT[op].encode()))
        if op is ast.Eq:
            for side in (test.left, right):
                sites += _value_sites(src, side, scope)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        # The keyword alone goes: `not (a == b)` keeps its parentheses (they end after the operand).
        keyword = re.match(rb"not\s*", src.data[src.start(test):src.start(test.operand)])
        sites.append(Site(src.start(test), src.start(test) + (keyword.end() if keyword else 3), b""))
    else:
        text = src.text(test)
        turned = b"not " + text if isinstance(test, _TIGHT) else b"not (" + text + b")"
        sites.append(Site(src.start(test), src.end(test), turned))
    return sites


def _call_sites(src: _Source, call: ast.Call, scope: Scope) -> list[Site]:
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
            and func.attr in _OPPOSITE_METHOD):
        return []
    end = src.end(func)
    sites = [Site(end - len(func.attr), end, _OPPOSITE_METHOD[func.attr].encode())]
    if func.attr == "assertEqual":
        for arg in call.args[:2]:
            sites += _value_sites(src, arg, scope)
    return sites


#: Context managers whose body may stop early without failing the test.
_EARLY_EXITS = {"raises", "warns", "deprecated_call", "assertRaises", "assertRaisesRegex", "assertWarns",
                "assertWarnsRegex", "suppress"}


def _runs_through(item: ast.withitem) -> bool:
    call = item.context_expr
    func = call.func if isinstance(call, ast.Call) else call
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name not in _EARLY_EXITS


def _checks(body: list[ast.stmt], params: frozenset[str] = frozenset(), *, own: frozenset[str] = frozenset(),
            undone_after: bool = False):
    """The checks a passing run of the test certainly executes, as (an assert's test or None,
    a method call or None): its top level up to the first `return`, and the bodies of its `for`
    loops and of `with` blocks that cannot stop early (a loop that never iterates is caught by
    `tasks check`). A loop over what a test's parameter gives (`params`) is left out: one case's
    list may be empty where another's is not (xarray 6992's `for name in dropped`), and in that
    case its twin cannot fail.

    A check the test changes state after (`_undoes`: a call that is not a check, an item or attribute
    set, but on what the test's own names hold, `own`) is left out too: a twin stops at its turned
    check, and would leave what its original undoes there (scikit-learn 13584's
    `set_config(print_changed_only=False)`) to the tests after it in the process, whose twins it could
    then make pass (`undone_after`: the enclosing body does so later)."""
    for index, statement in enumerate(body):
        if isinstance(statement, ast.Return):
            break
        later = undone_after or any(_undoes(after, own) for after in body[index + 1:])
        if isinstance(statement, ast.Assert):
            if not later:
                yield statement.test, None
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            if not later:
                yield None, statement.value
        elif isinstance(statement, ast.For) and not statement.orelse \
                and not any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(statement.iter)):
            yield from _checks(statement.body, params, own=own, undone_after=later)
        elif isinstance(statement, ast.With) and all(_runs_through(item) for item in statement.items):
            yield from _checks(statement.body, params, own=own, undone_after=later)


def _undoes(statement: ast.stmt, own: frozenset[str]) -> bool:
    """Whether a statement can change state beyond what the test's own names hold (`own`): a call that
    is not a check (`self.assert...`), an item or attribute set or deleted (`rcParams["x"] = old`)."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr.startswith("assert"):
            return False
        return _root(func) not in own
    targets = statement.targets if isinstance(statement, (ast.Assign, ast.Delete)) else \
        [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else []
    return any(isinstance(target, (ast.Subscript, ast.Attribute)) and _root(target) not in own for target in targets)


def _root(node: ast.expr) -> str:
    """The name an attribute, item or call chain starts from (`cal` of `cal.rooms["x"].book`), or ""."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _own_names(function: ast.FunctionDef) -> frozenset[str]:
    """The names a test function binds itself (its parameters, fixtures among them, and its locals)."""
    bound = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return _parameters(function) | bound | {"self"}


def _parameters(function: ast.FunctionDef) -> frozenset[str]:
    """The names a test function takes (its parametrised values and fixtures)."""
    args = function.args
    return frozenset(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]) - {"self", "cls"}


def _statement_sites(src: _Source, body: list[ast.stmt], scope: Scope,
                     params: frozenset[str] = frozenset(), own: frozenset[str] = frozenset()) -> list[Site]:
    sites = []
    for test, call in _checks(body, params, own=own):
        sites += _assert_sites(src, test, scope) if test is not None else _call_sites(src, call, scope)
    return sites


def _compared(body: list[ast.stmt], own: frozenset[str]) -> list[ast.expr]:
    """Both sides of every `==` (and `assertEqual`) among the test's certain checks."""
    sides = []
    for test, call in _checks(body, own=own):
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            sides += [test.left, test.comparators[0]]
        elif call is not None and isinstance(call.func, ast.Attribute) and call.func.attr == "assertEqual":
            sides += call.args[:2]
    return sides


def _param_sites(src: _Source, function: ast.FunctionDef, scope: Scope) -> list[Site]:
    """Value twins of a parametrised test: a parameter the test only ever compares as an
    expected value (`== Decimal(expected)`) gets a stepped constant in every row of its
    `parametrize` list (every case of the twin changed, so each fails where its original passes)."""
    sites = []
    for decorator in function.decorator_list:
        found = parametrize_rows(decorator)
        if found is None:
            continue
        names, rows = found
        for index, name in enumerate(names):
            uses = [n for statement in function.body for n in ast.walk(statement)
                    if isinstance(n, ast.Name) and n.id == name]
            as_value = Scope(scope.fixed | {name}, scope.pool)
            compared = [n for side in _compared(function.body, _own_names(function)) if fixed(side, as_value)
                        for n in ast.walk(side) if isinstance(n, ast.Name) and n.id == name]
            if not uses or len(compared) != len(uses) or any(isinstance(n.ctx, ast.Store) for n in uses):
                continue
            edits = []
            for row in rows.elts:
                value = row if len(names) == 1 else row.elts[index]
                changed = [(c, other_constants(c, src.text(c), [])) for c in ast.walk(value)
                           if isinstance(c, ast.Constant) and not _in_call_of_several(c, value)] \
                    if fixed(value, scope) else []
                changed = [(c, others[0]) for c, others in changed if others]
                if not changed:
                    break
                edits.append(Site(src.start(changed[-1][0]), src.end(changed[-1][0]), changed[-1][1]))
            else:
                start = src.start(rows)
                text = apply_sites(src.text(rows), [Site(e.start - start, e.end - start, e.text) for e in edits])
                sites.append(Site(start, src.end(rows), text, True, renames=True))
    return sites


def _in_call_of_several(constant: ast.Constant, value: ast.expr) -> bool:
    """Whether `constant` is an argument of a call of several arguments within a parametrize row: rows
    are built when the module is imported, and a stepped one there can make the call raise
    (dateutil's `datetime(2016, 2, 29)` -> `datetime(2016, 2, 30)`), which fails every test of the file."""
    return any(isinstance(call, ast.Call) and len(call.args) + len(call.keywords) > 1
               and any(node is constant for node in ast.walk(call)) for call in ast.walk(value))


def _tests(module: ast.Module):
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            yield "", node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    yield node.name, item


def base_classes(data: bytes) -> set[str]:
    """The names a test file's classes derive from (`class TestIndex(VariableSubclassobjects)`, `mod.Base`)."""
    try:
        return _bases(parse_python(data))
    except (SyntaxError, ValueError):
        return set()


def _bases(module: ast.Module) -> set[str]:
    return {base.id if isinstance(base, ast.Name) else base.attr for node in ast.walk(module)
            if isinstance(node, ast.ClassDef) for base in node.bases if isinstance(base, (ast.Name, ast.Attribute))}


def mutation_sites(path: str, data: bytes, derived_from: frozenset[str] = frozenset()) -> dict[TestKey, list[Site]]:
    """Every test function of a test file with the ways it can be turned into a twin.

    A method of a class another class derives from (in this file or in `derived_from`, the bases the
    other held-out files name) has none: its cases are reported under each subclass's name (xarray's
    `TestIndexVariable::test_copy`, defined on `VariableSubclassobjects`), so a twin of it could not
    be told from a real test in the half it runs in."""
    try:
        module = parse_python(data)
    except (SyntaxError, ValueError):
        return {}
    src = _Source(data)
    stem = path.rsplit("/", 1)[-1].removesuffix(".py")
    found: dict[TestKey, list[Site]] = {}
    scope = scope_of(module)
    inherited = derived_from | _bases(module)
    for cls, function in _tests(module):
        if cls and cls in inherited:
            continue
        inside = within(scope, function)
        sites = _statement_sites(src, function.body, inside, _parameters(function), _own_names(function)) \
            + _param_sites(src, function, inside)
        if sites:
            found[TestKey(stem, cls, function.name)] = sites
    return found


def apply_sites(data: bytes, sites: list[Site]) -> bytes:
    for site in sorted(sites, key=lambda s: s.start, reverse=True):
        data = data[:site.start] + site.text + data[site.end:]
    return data
