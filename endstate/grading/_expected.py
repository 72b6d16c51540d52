"""Expected values a twin may change: what in a held-out test means the same in every end state.

A twin that turns an operator (`==` into `!=`) fails honestly, but code in the test process
can read its source and see the turned operator, since real tests rarely assert `!=`. A twin
that changes a value the test expects keeps the comparison as it was and fails as a real
failure would. The value must mean the same whatever the end state (a constant, a display of
them, a call of a builtin or of the standard library on them: nothing of the code under
test), so that `tasks check`, which proves each candidate fails on `solution/`, proves it
fails on every end state whose original passes.
"""

from __future__ import annotations

import ast
import builtins
import sys
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

__all__ = ["Scope", "scope_of", "within", "fixed", "other_constants", "parametrize_rows"]

def other_constants(node: ast.Constant, literal: bytes, pool: list) -> list[bytes]:
    """Literals of the same kind and look as `literal`, with another value: a digit stepped,
    and one other value of the same type that the file itself spells (a changed value must
    not look made up to code that reads the test)."""
    value = node.value
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        if not literal.strip().isdigit():
            return []
        found = [str(value + 1).encode(), str(value - 1).encode()]
    elif isinstance(value, float):
        try:
            number = Decimal(literal.decode())
        except (InvalidOperation, UnicodeDecodeError):
            return []
        step = Decimal(1).scaleb(min(number.as_tuple().exponent, 0))
        while float(number + step) == value and step < 1:  # past a float's precision: step a digit it keeps
            step *= 10
        found = [str(number + step).encode(), str(number - step).encode()]
    elif isinstance(value, str) and value and literal[:1] in (b"'", b'"') and literal[:3] not in (b"'''", b'"""'):
        quote = literal[:1].decode()
        if literal.decode("utf-8", "replace") != f"{quote}{value}{quote}" or "\\" in value:
            return []
        found = [f"{quote}{_stepped(value)}{quote}".encode()]
        pool = [f"{quote}{other}{quote}" for other in pool
                if quote not in other and "\\" not in other and _shape(other) == _shape(value)]
    else:
        return []
    others = [(other if isinstance(other, str) else repr(other)).encode() for other in pool
              if isinstance(other, str) or (type(other) is type(value) and other != value and other >= 0)]
    others = [other for other in others if other != literal and other not in found]
    return found + others[:1]


def _shape(text: str) -> tuple[bool, bool, bool]:
    """Whether a string holds digits, letters, spaces: another value must read alike."""
    return any(c.isdigit() for c in text), any(c.isalpha() for c in text), " " in text


def _stepped(value: str) -> str:
    """`value` with its last digit stepped (a count or an amount changed), else its last letter."""
    for at in range(len(value) - 1, -1, -1):
        if value[at].isascii() and value[at].isdigit():
            return value[:at] + str((int(value[at]) + 1) % 10) + value[at + 1:]
    last = value[-1]
    if last.isalpha() and last.isascii():
        turned = chr((ord(last.lower()) - 97 + 1) % 26 + 97)
        return value[:-1] + (turned.upper() if last.isupper() else turned)
    return value + "s"


class Scope(NamedTuple):
    """What an expression in one test may use and still mean the same in every end state."""

    #: Names bound to builtins or to what the standard library exports, never to the code under test.
    fixed: frozenset
    #: Constants the test file spells, by type, as (line, value): changed values that look like the file's own.
    pool: dict


def fixed(node: ast.AST, scope: Scope) -> bool:
    """Whether `node` evaluates the same whatever the end state: constants, displays of
    them, and calls of builtins or of the standard library on them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(not isinstance(e, ast.Starred) and fixed(e, scope) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and fixed(k, scope) for k in node.keys) and all(fixed(v, scope) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Name):
        return node.id in scope.fixed
    if isinstance(node, ast.Attribute):
        return fixed(node.value, scope)
    if isinstance(node, ast.Call):
        return (fixed(node.func, scope) and all(not isinstance(a, ast.Starred) and fixed(a, scope) for a in node.args)
                and all(k.arg is not None and fixed(k.value, scope) for k in node.keywords))
    return False


def scope_of(module: ast.Module) -> Scope:
    """The module's fixed names (builtins it does not rebind, what it imports from the standard
    library) and the constants it spells."""
    imported, bound = set(), set()
    for node in module.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                whence = alias.name if isinstance(node, ast.Import) else (node.module or "") * (node.level == 0)
                name = alias.asname or alias.name.split(".")[0]
                stdlib = whence.split(".")[0] in sys.stdlib_module_names and alias.name != "*"
                (imported if stdlib else bound).add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        else:
            bound |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    pool: dict = {}
    for node in ast.walk(module):
        value = getattr(node, "value", None)
        if isinstance(node, ast.Constant) and type(value) in (int, float, str):
            if isinstance(value, str) and (not value or len(value) > 40 or not value.isprintable()):
                continue  # a docstring or a blob would stand out as an expected value
            pool.setdefault(type(value), []).append((node.lineno, value))
    return Scope(frozenset((set(dir(builtins)) | imported) - bound), pool)


def within(scope: Scope, function: ast.FunctionDef) -> Scope:
    """The scope inside one test: what the test binds itself (its parameters too) is not fixed."""
    args = function.args
    local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    local |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return Scope(scope.fixed - local, scope.pool)


def parametrize_rows(decorator: ast.expr) -> tuple[list[str], ast.List | ast.Tuple] | None:
    """(argument names, the display of rows) of a plain `@...parametrize("a, b", [...])`; None for
    anything else (indirect parameters, rows built by code, `pytest.param` rows are left alone)."""
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "parametrize" and len(decorator.args) == 2 and not decorator.keywords):
        return None
    spec, rows = decorator.args
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        names = [name.strip() for name in spec.value.split(",") if name.strip()]
    elif isinstance(spec, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in spec.elts):
        names = [e.value for e in spec.elts]
    else:
        return None
    if not names or not isinstance(rows, (ast.List, ast.Tuple)) or not rows.elts:
        return None
    if len(names) > 1 and not all(isinstance(r, (ast.List, ast.Tuple)) and len(r.elts) == len(names)
                                  for r in rows.elts):
        return None
    return names, rows
