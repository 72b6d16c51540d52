"""The values setup.py's top level gives its names, read without running it.

setup.py is a program: a project builds its extras in steps as often as it writes them out whole
(marshmallow 2.x: `EXTRAS_REQUIRE['dev'] = EXTRAS_REQUIRE['reco'] + EXTRAS_REQUIRE['tests'] + ...`;
others `extras_require={"tests": tests_require}`, `requires += [...]`, `extras["all"].extend(...)`).
`top_level_values` follows the module's top-level statements in order, for the plain forms alone:
assignment to a name or to a name's key, `+=`, and `.append`/`.extend`/`.update` of a value
already known; an expression of literals, known names, their keys and `+` of lists, tuples or
strings. Anything else (a branch, a loop, a call of the project's own) leaves the names it would
set as they were, or unknown: a requirement is never made up, only left out.
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["top_level_values", "static_value"]


def static_value(node: ast.expr, known: dict[str, Any]) -> Any:
    """The value of `node` from literals and `known` names; ValueError where it depends on anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [static_value(element, known) for element in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):  # `**other`
            raise ValueError("a dict unpacked into another")
        try:
            return {static_value(k, known): static_value(v, known) for k, v in zip(node.keys, node.values)
                    if k is not None}
        except TypeError:  # a key that is no key (a list): setup.py would not run either
            raise ValueError("an unhashable key") from None
    if isinstance(node, ast.Name):
        if node.id not in known:
            raise ValueError(f"{node.id} is not known")
        return known[node.id]
    if isinstance(node, ast.Subscript):
        container, key = static_value(node.value, known), static_value(node.slice, known)
        try:
            return container[key]
        except (KeyError, IndexError, TypeError):
            raise ValueError("no such key") from None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = static_value(node.left, known), static_value(node.right, known)
        if isinstance(left, list) and isinstance(right, (list, tuple)):
            return left + list(right)
        if isinstance(left, tuple) and isinstance(right, (list, tuple)):
            return list(left) + list(right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        raise ValueError("+ of other values")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple", "sorted") \
            and len(node.args) == 1 and not node.keywords:
        value = static_value(node.args[0], known)
        if isinstance(value, (list, tuple)):
            return list(value)
    raise ValueError("not a plain value")


def top_level_values(module: ast.Module) -> dict[str, Any]:
    """Each name setup.py's top level sets to a plain value, as it stands after the last statement."""
    known: dict[str, Any] = {}
    for statement in module.body:
        try:
            _follow(statement, known)
        except ValueError:
            for name in _names_set(statement):
                known.pop(name, None)  # its value is no longer known
    return known


def _follow(statement: ast.stmt, known: dict[str, Any]) -> None:
    if isinstance(statement, ast.Assign):
        value = static_value(statement.value, known)
        for target in statement.targets:
            _store(target, value, known)
    elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
        _store(statement.target, static_value(statement.value, known), known)
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
        current = static_value(statement.target, known)  # type: ignore[arg-type]
        added = static_value(statement.value, known)
        if not (isinstance(current, list) and isinstance(added, (list, tuple))):
            raise ValueError("+= of other values")
        current.extend(added)
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        if not (isinstance(call.func, ast.Attribute) and len(call.args) == 1 and not call.keywords):
            if _names_set(statement):
                raise ValueError("a call that may change a known value")
            return
        owner, argument = static_value(call.func.value, known), static_value(call.args[0], known)
        method = call.func.attr
        if isinstance(owner, list) and method in ("append", "extend"):
            owner.append(argument) if method == "append" else owner.extend(argument)
        elif isinstance(owner, dict) and method == "update" and isinstance(argument, dict):
            owner.update(argument)
        elif _names_set(statement):
            raise ValueError("a method that may change a known value")
    elif _names_set(statement):
        raise ValueError("a statement of another kind")


def _store(target: ast.expr, value: Any, known: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        known[target.id] = _copy(value)
    elif isinstance(target, ast.Subscript):
        container = static_value(target.value, known)
        if not isinstance(container, dict):
            raise ValueError("a key set on another value")
        container[static_value(target.slice, known)] = _copy(value)
    else:
        raise ValueError("an assignment to another target")


def _copy(value: Any) -> Any:
    """Values are copied as they are stored: `b = a; b += [...]` must not change `a` here (it would in Python
    for a list, but the forms setup.py files use never rely on it, and a copy never adds to the other)."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def _names_set(statement: ast.stmt) -> set[str]:
    """The top-level names a statement may bind or change (its targets, the objects whose methods it calls)."""
    found: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                found.add(base.id)
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                found.add(base.id)
    return found
