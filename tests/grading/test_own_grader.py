"""A suite's own grader module, found beside task.toml or in the suite folder with no
PYTHONPATH, and a sealed end state that names what a grader may call."""

from __future__ import annotations

import importlib
import textwrap

import pytest

from endstate.authoring import new_blank_task
from endstate.errors import GraderContractError
from endstate.grading import Outcome, run_grader
from endstate.run import resolve_graders
from endstate.sandbox import SealedSandbox
from endstate.sandbox._tree import FileEntry
from endstate.task import load_task


def _task_with_grader(suite, task_id, module, source, grader):
    folder = new_blank_task(task_id, suite=suite)
    if source is not None:
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
    manifest = folder / "task.toml"
    manifest.write_text(manifest.read_text() + f'\n[[graders]]\nname = "{module}:{grader}"\nargs = {{ path = "a.py" }}\n')
    return load_task(folder)


GRADER = '''
    from endstate.grading import Verdict

    def touched(sandbox, path):
        return Verdict.ok("{word}") if path in sandbox.changed_paths() else Verdict.fail(f"{{path}} unchanged")
'''


def _sealed(**files):
    return SealedSandbox(None, {p: FileEntry(0o644, b) for p, b in files.items()}, {})


def test_a_grader_beside_task_toml_imports_without_pythonpath(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)
    one = _task_with_grader(tmp_path, "bugfix-one", "my_graders", GRADER.format(word="one"), "touched")
    two = _task_with_grader(tmp_path, "bugfix-two", "my_graders", GRADER.format(word="two"), "touched")
    with pytest.raises(ImportError):  # not importable the ordinary way: only through the task
        importlib.import_module("my_graders")
    first, second = resolve_graders(one)[-2], resolve_graders(two)[-2]  # the probe comes last
    assert first.args == {"path": "a.py"}
    # Each task gets its own module of that name, not whichever was imported first.
    assert run_grader(first, _sealed(**{"a.py": b"x"})).reason == "one"
    assert run_grader(second, _sealed(**{"a.py": b"x"})).reason == "two"
    assert run_grader(second, _sealed()).outcome is Outcome.FAIL


def test_a_grader_in_the_suite_folder_is_found_too(tmp_path):
    (tmp_path / "suite_graders.py").write_text(textwrap.dedent(GRADER.format(word="suite")))
    task = _task_with_grader(tmp_path, "bugfix-suite", "suite_graders", None, "touched")
    assert run_grader(resolve_graders(task)[-2], _sealed(**{"a.py": b"x"})).reason == "suite"


def test_a_missing_module_names_where_it_was_looked_for(tmp_path):
    task = _task_with_grader(tmp_path, "bugfix-none", "not_there", None, "touched")
    with pytest.raises(GraderContractError) as caught:
        resolve_graders(task)
    message = str(caught.value)
    assert message.startswith("task bugfix-none: grader 'not_there:touched'")
    assert "beside task.toml or in the suite folder" in message and str(task.root.resolve()) in message


def test_a_module_that_raises_on_import_is_one_line_naming_it(tmp_path):
    task = _task_with_grader(tmp_path, "bugfix-broken", "broken", "raise ValueError('no config')\n", "touched")
    with pytest.raises(GraderContractError, match=r"module 'broken' raised ValueError on import: no config"):
        resolve_graders(task)


def test_a_wrong_sandbox_attribute_lists_what_a_grader_may_use(tmp_path):
    sealed = _sealed(**{"a.py": b"x"})
    with pytest.raises(AttributeError) as caught:
        sealed.read_file("a.py")
    message = str(caught.value)
    assert "no 'read_file'" in message and "did you mean 'read_text'?" in message
    for name in ("read_text", "exists", "changed_paths", "run", "fixture_text", "tree_hash"):
        assert name in message
    assert getattr(sealed, "nothing_here", None) is None  # getattr with a default still works
    # Through a real grader the listing reaches the ERROR verdict's reason.
    task = _task_with_grader(tmp_path, "bugfix-typo", "typo_graders", '''
        from endstate.grading import Verdict

        def touched(sandbox, path):
            return Verdict.ok() if sandbox.read_file(path) else Verdict.fail("empty")
    ''', "touched")
    verdict = run_grader(resolve_graders(task)[-2], sealed)
    assert verdict.outcome is Outcome.ERROR and "a grader may use" in verdict.reason and "read_text" in verdict.reason
    # Every name in the listing really exists on the sealed end state.
    assert all(hasattr(sealed, name) for name in SealedSandbox.GRADER_API)
