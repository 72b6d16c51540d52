"""Every parse of Python text in endstate goes through the one lock in endstate.task._source.

CPython 3.11 fails with "AST constructor recursion depth mismatch" when two threads build
syntax trees at once; `tasks check` failed that way on CI when the integrity grader parsed
in one thread while the twin check parsed in another. `ast.parse`, `ast.literal_eval` on
text and `compile(..., ast.PyCF_ONLY_AST)` all build trees; only the lock may call them.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import endstate
from endstate.task import literal_python, parse_python

PACKAGE = Path(endstate.__file__).parent
LOCK_HOLDER = PACKAGE / "task" / "_source.py"


def _tree_builders(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "ast"):
            continue
        name = node.func.attr
        # literal_eval of a tree (`node`, `keyword.value`) builds none; of text it parses first
        argument = node.args[0] if node.args else None
        text_argument = not (isinstance(argument, ast.Attribute)
                             or (isinstance(argument, ast.Name) and argument.id == "node"))
        if name == "parse" or (name == "literal_eval" and text_argument):
            found.append(f"{path.relative_to(root)}:{node.lineno} ast.{name}")
    return found


def test_no_module_but_the_lock_holder_builds_syntax_trees_from_text():
    builders = [hit for path in sorted(PACKAGE.rglob("*.py")) if path != LOCK_HOLDER
                for hit in _tree_builders(path)]
    assert builders == [], "parse through endstate.task.parse_python / literal_python instead"


def test_the_checker_sees_a_bare_parse(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import ast\ntree = ast.parse(text)\nvalue = ast.literal_eval('1')\n")
    assert [hit.rsplit(" ", 1)[1] for hit in _tree_builders(module, tmp_path)] == ["ast.parse", "ast.literal_eval"]


def test_parsing_from_many_threads_at_once_never_raises():
    source = "def f(x):\n" + "".join(f"    y{i} = [x, ({i}, {{'k': x}})]\n" for i in range(400))
    errors: list[BaseException] = []

    def parse_many():
        try:
            for _ in range(30):
                parse_python(source)
                assert literal_python("[1, (2, {'a': 3})]") == [1, (2, {"a": 3})]
        except BaseException as error:  # noqa: BLE001 - the test reports whatever a thread raised
            errors.append(error)

    threads = [threading.Thread(target=parse_many) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
