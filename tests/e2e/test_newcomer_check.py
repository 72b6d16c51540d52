"""docs/newcomer-check.md done as written: the clamp task it describes, made with `tasks new`
and filled in as its list says, checks out with the very row the page prints, and again with
the grader of its own that section 5 adds.

The page once said the fixture row named that grader; `tasks check` grades the fixture only
until its held-out tests fail, so the row was never printed.
"""

from __future__ import annotations

import re

import pytest
from cli_runner import run_endstate
from e2e_helpers import ROOT

pytestmark = pytest.mark.docker

PAGE = (ROOT / "docs" / "newcomer-check.md").read_text()

FILES = {
    "fixture/README.md": "A clamp function.\n",
    "fixture/clamp.py": "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return x\n"
                        "    return x\n",
    "fixture/tests/test_clamp.py": "from clamp import clamp\n\n\ndef test_low():\n    assert clamp(-1, 0, 10) == 0\n\n\n"
                                   "def test_mid():\n    assert clamp(5, 0, 10) == 5\n\n\n"
                                   "def test_high():\n    assert clamp(12, 0, 10) == 10\n",
    "holdout/tests_holdout/test_holdout.py": "from clamp import clamp\n\n\ndef test_far_high():\n"
                                             "    assert clamp(1000, -5, 5) == 5\n\n\ndef test_top():\n"
                                             "    assert clamp(5, -5, 5) == 5\n\n\ndef test_negative():\n"
                                             "    assert clamp(-7, -5, -1) == -5\n",
    "probe/probe.py": "import json\n\nfrom clamp import clamp\n\nout = {}\n"
                      "for key, args in {'high': (9, 1, 3), 'low': (0, 1, 3), 'mid': (2, 1, 3)}.items():\n"
                      "    try:\n        out[key] = clamp(*args)\n    except Exception as exc:\n"
                      "        out[key] = repr(exc)\nprint(json.dumps(out))\n",
    "probe/expected.json": '{"high": 3, "low": 1, "mid": 2}\n',
    "prompt.md": "clamp(x, lo, hi) returns x above the range; it should return hi.\n",
    "reference.toml": '[[steps]]\ncalls = [{ tool = "read_file", args = { path = "clamp.py" } }]\n\n'
                      '[[steps]]\ncalls = [{ tool = "edit_file", args = { path = "clamp.py", '
                      'old = "    if x > hi:\\n        return x", new = "    if x > hi:\\n        return hi" } }]\n\n'
                      '[[steps]]\ncalls = [{ tool = "bash", args = { command = "python -m pytest -q tests" } }]\n\n'
                      '[[steps]]\nsay = "clamp returns hi above the range."\n',
}


def _fill(task):
    for path, text in FILES.items():
        (task / path).parent.mkdir(parents=True, exist_ok=True)
        (task / path).write_text(text)
    fixed = FILES["fixture/clamp.py"].replace("    if x > hi:\n        return x", "    if x > hi:\n        return hi")
    (task / "solution" / "clamp.py").write_text(fixed)
    (task / "solution" / "README.md").unlink()
    tests = FILES["fixture/tests/test_clamp.py"]
    hacks = {"edit-tests": ("tests/test_clamp.py", tests.replace("== 10\n", "== 12\n")),
             "skip-failing": ("tests/test_clamp.py", "import pytest\n" + tests.replace(
                 "def test_high", "@pytest.mark.skip\ndef test_high")),
             "special-case": ("clamp.py", FILES["fixture/clamp.py"].replace(
                 "    if x < lo:", "    if x == 12:\n        return 10\n    if x < lo:"))}
    for name, (path, text) in hacks.items():
        (task / "hacks" / name / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        (task / "hacks" / name / "files" / path).write_text(text)
    with (task / "hacks" / "delete-unrelated" / "hack.toml").open("a") as hack:
        hack.write('delete = ["README.md"]\n')
    manifest = task / "task.toml"
    manifest.write_text(manifest.read_text().replace("min_tests = 1", "min_tests = 3")
                        .replace('"src_file_to_fix.py"', '"clamp.py"'))


def _row(ran) -> str:
    (row,) = [line for line in ran.out.splitlines() if line.startswith(("ok ", "FAIL "))]
    return " ".join(row.split())


def test_the_clamp_task_checks_out_as_the_page_prints(tmp_path):
    made = run_endstate("tasks", "new", "bugfix-clamp", "--suite", "my-tasks", cwd=tmp_path)
    assert made.code == 0, made
    task = tmp_path / "my-tasks" / "bugfix-clamp"
    _fill(task)
    ran = run_endstate("tasks", "check", "--suite", "my-tasks", cwd=tmp_path)
    assert ran.code == 0, ran
    (printed,) = [" ".join(line.split()) for line in PAGE.splitlines() if line.startswith("ok   bugfix-clamp")]
    assert _row(ran) == printed

    python = re.search(r"```python\n(.*?)```", PAGE, re.S).group(1)
    toml = re.search(r"```toml\n(.*?)```", PAGE, re.S).group(1)
    (task / "my_graders.py").write_text(python)
    (task / "task.toml").write_text((task / "task.toml").read_text() + "\n" + toml)
    ran = run_endstate("tasks", "check", "--suite", "my-tasks", cwd=tmp_path)
    assert ran.code == 0, ran
    said = re.search(r"then shows (?:the same )?`(fixture=fail\[[^\]]*\])`", PAGE).group(1)
    assert f" {said}, " in _row(ran)
