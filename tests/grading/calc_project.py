"""The small project the Docker grading tests grade: `calc.ops.double`, buggy (`x + 1`) or fixed
(`x * 2`), with a module of visible tests under tests/ and one of held-out tests under tests_holdout/."""

from __future__ import annotations

from endstate.grading import Grader, resolve
from endstate.sandbox import FileEntry

BUGGY = b"def double(x):\n    return x + 1\n"
FIXED = b"def double(x):\n    return x * 2\n"
#: One visible test, which the buggy double fails.
TESTS = b"from calc.ops import double\n\n\ndef test_two():\n    assert double(2) == 4\n"
HOLDOUT = b"from calc.ops import double\n\n\ndef test_seven():\n    assert double(7) == 14\n"


def files(entries: dict[str, bytes]) -> dict[str, FileEntry]:
    return {path: FileEntry(0o644, data) for path, data in entries.items()}


def calc_trees(tests: bytes = TESTS, holdout: bytes = HOLDOUT) -> tuple[dict[str, FileEntry], dict[str, FileEntry]]:
    """The buggy fixture with `tests` as its visible test module, and the held-out tree."""
    fixture = files({"calc/__init__.py": b"", "calc/ops.py": BUGGY, "tests/test_ops.py": tests})
    return fixture, files({"tests_holdout/test_more.py": holdout})


def calc_graders(visible: int, held_out: int) -> tuple[Grader, Grader]:
    """tests_pass over tests/ and holdout over tests_holdout/, each asking for at least that many tests."""
    return (resolve("endstate.grading:tests_pass", {"command": "python -m pytest -q tests", "min_tests": visible}),
            resolve("endstate.grading:holdout", {"command": "python -m pytest -q tests_holdout",
                                                 "min_tests": held_out}))
