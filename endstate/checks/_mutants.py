"""Wrong fixes and right rewrites of a task's reference, made from its Python source.

A mutant is the reference with one classical fault put into the code the fix changed
(the lines it added or rewrote, the whole of every statement those lines belong to,
and the lines around a deletion): a comparison or arithmetic operator replaced, a
boolean operator swapped, a constant moved by one, a branch forced, a statement
removed, a returned value dropped, two arguments swapped. A rewrite is the reference
said another way (locals renamed, comparisons mirrored): it must still pass.

Each change is made on the syntax tree and then written back into the file's own
text over the span of the node it replaces, so the diff shows one expression and the
rest of the file (comments, layout) is untouched. The edited text is parsed again and
must give exactly the tree the change meant; a change that does not (precedence, an
f-string whose positions are off) is tried in parentheses, then dropped.

Order and ids are deterministic: files by path, then changes by line, column and
operator. An id reads `path:line:col:operator`, so a triage record names a mutant a
person can find.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from endstate.sandbox import FileEntry, Tree
from endstate.task import is_test_code, parse_python

__all__ = ["Change", "mutants_of", "rewrites_of", "changed_sources", "file_diff"]


@dataclass(frozen=True)
class Change:
    """One mutant or rewrite: the reference with `path` rewritten to `source`."""

    id: str
    path: str
    source: bytes

    def tree(self, solution: Tree) -> Tree:
        changed = dict(solution)
        changed[self.path] = FileEntry(solution[self.path].mode, self.source)
        return changed


def changed_sources(fixture: Tree, solution: Tree) -> Iterator[tuple[str, bytes, bytes]]:
    """(path, before, after) of each Python source file outside the tests that the solution changes."""
    for path in sorted(solution):
        entry = solution[path]
        if not path.endswith(".py") or is_test_code(path) or entry.is_link:
            continue
        before = fixture[path].data if path in fixture and not fixture[path].is_link else b""
        if entry.data != before:
            yield path, before, entry.data


def file_diff(path: str, before: bytes, after: bytes) -> str:
    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, f"a/{path}", f"b/{path}", n=1))


def _changed_lines(before: bytes, after: bytes) -> set[int]:
    """1-based lines of `after` the change added or rewrote, and both neighbours of a deletion."""
    old = before.decode("utf-8", "replace").splitlines()
    new = after.decode("utf-8", "replace").splitlines()
    lines: set[int] = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
        elif tag == "delete":
            lines.update({j1, j1 + 1})
    return lines


def _spans(node: ast.AST) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


def _targets(module: ast.Module, changed: set[int]) -> set[int]:
    """The changed lines widened to whole simple statements and compound statements' headers."""
    lines = set(changed)
    for node in ast.walk(module):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        body = getattr(node, "body", None)
        span = range(node.lineno, body[0].lineno) if isinstance(body, list) and body else _spans(node)
        if changed & set(span):
            lines.update(span)
    return lines


class _Source:
    """A file's text as bytes, addressed the way `ast` addresses it (line, UTF-8 byte column)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0]
        for line in data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.starts[node.lineno - 1] + node.col_offset,
                self.starts[node.end_lineno - 1] + node.end_col_offset)

    def edit(self, edits: list[tuple[int, int, str]]) -> bytes:
        out, at = [], 0
        for start, end, text in sorted(edits):
            out += [self.data[at:start], text.encode("utf-8")]
            at = end
        return b"".join(out + [self.data[at:]])


def _parents(module: ast.Module) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(module) for child in ast.iter_child_nodes(node)}


def _put(parent: ast.AST, old: ast.AST, new: ast.AST) -> Callable[[], None]:
    """Put `new` where `old` is under `parent`; returns the undo."""
    for field, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return lambda: setattr(parent, field, old)
        if isinstance(value, list):
            for index, item in enumerate(value):
                if item is old:
                    value[index] = new
                    return lambda: value.__setitem__(index, old)
    raise LookupError("node not found under its parent")


def _dump(source: bytes) -> str | None:
    try:
        return ast.dump(parse_python(source))
    except (SyntaxError, ValueError):
        return None


def _apply(module: ast.Module, text: _Source, parents: dict[int, ast.AST],
           swaps: list[tuple[ast.AST, ast.AST]]) -> bytes | None:
    """The file with every (old node, new node) of `swaps` written in, or None when the text
    cannot be made to parse to the tree the swaps mean."""
    undo = [_put(parents[id(old)], old, new) for old, new in swaps]
    try:
        expected = ast.dump(module)
    finally:
        for step in reversed(undo):
            step()
    plain = [(*text.span(old), ast.unparse(new)) for old, new in swaps]
    for edits in (plain, [(s, e, f"({t})" if isinstance(old, ast.expr) else t)
                          for (s, e, t), (old, _) in zip(plain, swaps)]):
        source = text.edit(edits)
        if _dump(source) == expected:
            return source
    return None


# -- the operators: each yields (node, replacement, operator name) -------------------------------
_COMPARE = {ast.Lt: (ast.LtE, ast.GtE), ast.LtE: (ast.Lt, ast.Gt), ast.Gt: (ast.GtE, ast.LtE),
            ast.GtE: (ast.Gt, ast.Lt), ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,), ast.In: (ast.NotIn,),
            ast.NotIn: (ast.In,), ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,)}
_ARITHMETIC = {ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Div,), ast.Div: (ast.Mult, ast.FloorDiv),
               ast.FloorDiv: (ast.Div,), ast.Mod: (ast.FloorDiv,), ast.Pow: (ast.Mult,),
               ast.BitAnd: (ast.BitOr,), ast.BitOr: (ast.BitAnd,), ast.LShift: (ast.RShift,),
               ast.RShift: (ast.LShift,)}
#: Operators whose operands, swapped, mean something else.
_ORDERED = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
#: Simple statements a mutant may remove.
_REMOVABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Assert, ast.Delete,
              ast.Break, ast.Continue)


def _name(op: type) -> str:
    return op.__name__


def _operators(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST, str]]:
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            for other in _COMPARE.get(type(op), ()):
                ops = list(node.ops)
                ops[index] = other()
                yield node, ast.Compare(node.left, ops, node.comparators), f"{_name(type(op))}>{_name(other)}"
    elif isinstance(node, ast.BinOp):
        for other in _ARITHMETIC.get(type(node.op), ()):
            yield node, ast.BinOp(node.left, other(), node.right), f"{_name(type(node.op))}>{_name(other)}"
        if isinstance(node.op, _ORDERED) and ast.dump(node.left) != ast.dump(node.right):
            yield node, ast.BinOp(node.right, node.op, node.left), "swap-operands"
    elif isinstance(node, ast.AugAssign):
        for other in _ARITHMETIC.get(type(node.op), ()):
            yield node, ast.AugAssign(node.target, other(), node.value), f"{_name(type(node.op))}=>{_name(other)}="
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield node, ast.BoolOp(other(), node.values), f"{_name(type(node.op))}>{_name(other)}"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.Invert)):
        yield node, node.operand, f"drop-{_name(type(node.op))}"
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield node, ast.Constant(not node.value), f"{node.value}>{not node.value}"
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield node, ast.Constant(node.value + 1), "+1"
        yield node, ast.Constant(node.value - 1), "-1"
    elif isinstance(node, ast.Call):
        positional = node.args
        if not any(isinstance(a, ast.Starred) for a in positional):
            for index in range(len(positional) - 1):
                if ast.dump(positional[index]) != ast.dump(positional[index + 1]):
                    args = list(positional)
                    args[index], args[index + 1] = args[index + 1], args[index]
                    yield node, ast.Call(node.func, args, node.keywords), f"swap-args-{index + 1}-{index + 2}"
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield node.value, ast.Constant(None), "return-None"


def _branches(node: ast.If) -> Iterator[tuple[ast.AST, ast.AST, str]]:
    for value in (True, False):
        if not (isinstance(node.test, ast.Constant) and node.test.value is value):
            yield node.test, ast.Constant(value), f"if-{value}"


def _removal(node: ast.stmt) -> Iterator[tuple[ast.AST, ast.AST, str]]:
    docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    if isinstance(node, _REMOVABLE) and not docstring:
        yield node, ast.Pass(), "remove-statement"


def _candidates(module: ast.Module, lines: set[int]) -> list[tuple[ast.AST, ast.AST, str]]:
    annotations = {id(sub) for node in ast.walk(module)
                   for ann in (getattr(node, "annotation", None), getattr(node, "returns", None)) if ann is not None
                   for sub in ast.walk(ann)}
    found = []
    for node in ast.walk(module):
        if not hasattr(node, "lineno") or id(node) in annotations:
            continue
        if isinstance(node, ast.If):
            if lines & set(_spans(node.test)):
                found += _branches(node)
            continue
        if not lines & set(_spans(node)):
            continue
        if isinstance(node, ast.stmt):
            found += _removal(node)
        found += _operators(node)
    return sorted(found, key=lambda f: (f[0].lineno, f[0].col_offset, f[2]))


def mutants_of(fixture: Tree, solution: Tree) -> list[Change]:
    """Every mutant of the solution's changes, deduplicated by the file it leaves, in id order."""
    mutants: list[Change] = []
    for path, before, after in changed_sources(fixture, solution):
        try:
            module = parse_python(after)
        except (SyntaxError, ValueError):
            continue
        text, parents, seen = _Source(after), _parents(module), {after, before}
        for old, new, operator in _candidates(module, _targets(module, _changed_lines(before, after))):
            source = _apply(module, text, parents, [(old, new)])
            if source is None or source in seen:
                continue
            seen.add(source)
            mutants.append(Change(f"{path}:{old.lineno}:{old.col_offset}:{operator}", path, source))
    return mutants


# -- rewrites that keep the meaning -------------------------------------------------------------
_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "globals"})
_MIRROR = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def _renamable(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """Locals of `function` that can be renamed by renaming their Name nodes alone."""
    inner = [n for n in ast.walk(function) if n is not function]
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Match)) for n in inner):
        return []
    names = {n.id for n in inner if isinstance(n, ast.Name)}
    if names & _DYNAMIC:
        return []
    unsafe = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    for node in inner:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            unsafe.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            unsafe.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            unsafe.update((a.asname or a.name).split(".")[0] for a in node.names)
    stored = {n.id for n in inner if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return sorted(stored - unsafe)


def rewrites_of(fixture: Tree, solution: Tree) -> list[Change]:
    """Meaning-preserving rewrites of the solution's changes: per changed function, its locals
    renamed; per changed file, every plain comparison on the changed lines mirrored (a < b as b > a)."""
    rewrites: list[Change] = []
    for path, before, after in changed_sources(fixture, solution):
        try:
            module = parse_python(after)
        except (SyntaxError, ValueError):
            continue
        text, parents = _Source(after), _parents(module)
        lines = _targets(module, _changed_lines(before, after))
        taken = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)} | {
            a.arg for a in ast.walk(module) if isinstance(a, ast.arg)}
        functions = sorted((n for n in ast.walk(module) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and lines & set(_spans(n))), key=lambda n: n.lineno)
        for function in functions:
            renames = {}
            for name in _renamable(function):
                new = f"{name}_r"
                while new in taken:
                    new += "_"
                renames[name] = new
            swaps = [(n, ast.Name(renames[n.id], n.ctx)) for n in ast.walk(function)
                     if isinstance(n, ast.Name) and n.id in renames]
            source = _apply(module, text, parents, swaps) if swaps else None
            if source is not None:
                rewrites.append(Change(f"{path}:{function.lineno}:rename-locals:{function.name}", path, source))
        mirrored, covered = [], set()
        for node in sorted((n for n in ast.walk(module) if isinstance(n, ast.Compare) and len(n.ops) == 1
                            and type(n.ops[0]) in _MIRROR and lines & set(_spans(n))),
                           key=lambda n: (n.lineno, n.col_offset)):
            if id(node) in covered:  # inside a comparison already mirrored: the spans would overlap
                continue
            covered.update(id(sub) for sub in ast.walk(node))
            mirrored.append((node, ast.Compare(node.comparators[0], [_MIRROR[type(node.ops[0])]()], [node.left])))
        source = _apply(module, text, parents, mirrored) if mirrored else None
        if source is not None:
            rewrites.append(Change(f"{path}:mirror-comparisons", path, source))
    return rewrites
