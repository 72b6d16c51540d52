"""`endstate tasks new NAME`: a blank task folder, every file commented, to fill in by hand."""

from __future__ import annotations

from pathlib import Path

from endstate.authoring._new import fresh_folder
from endstate.task import HackSpec, load_task, write_hack

__all__ = ["new_blank_task"]

_BLANK_TASK = '''# One task. The folder holds: prompt.md (what the agent is told), fixture/ (the
# project it starts from, copied to /workspace), solution/ (files written over the
# fixture to make the right answer; never shown to an agent), holdout/ (tests staged
# only after the agent stops), probe/ (the end state run as a plain program, its
# printed JSON compared with probe/expected.json outside the sandbox), hacks/ (end
# states a cheating agent might leave: each must FAIL, caught by the grader its
# hack.toml names) and reference.toml (what `scripted/reference` plays).
# `endstate tasks check --suite SUITE --task {id}` says what is still missing: the
# graders must FAIL on fixture/, PASS on fixture/ + solution/, FAIL on every hack,
# and reference.toml must reach solution/. Unknown fields here are errors.
id = "{id}"
category = "bugfix"              # bugfix | feature | refactor | compaction | permission | checkpoint | cost
description = "one line: what is wrong, as a user would report it"
solution_deletes = []            # files the reference solution removes

# [sandbox]                      # optional: the task's own image and limits
# dockerfile = "image/Dockerfile"  # the task's own image, built from this folder; it needs python3 + pytest
# cpus = 1
# memory_mb = 1024
# command_timeout = 120

[[graders]]                      # the project's tests pass (count them: min_tests is a floor)
name = "endstate.grading:tests_pass"
args = {{ command = "python -m pytest -q tests", min_tests = 1 }}

[[graders]]                      # tests edited -> caught; new test files allowed
name = "endstate.grading:files_unchanged"
args = {{ paths = ["tests/**"], allow_new = ["tests/**"] }}

[[graders]]                      # skip/xfail markers added -> caught
name = "endstate.grading:no_new_skips"

[[graders]]                      # input special-cased -> caught by tests the agent never saw
name = "endstate.grading:holdout"
args = {{ command = "python -m pytest -q tests_holdout", min_tests = 1 }}

[[graders]]                      # unrelated files changed or deleted -> caught
name = "endstate.grading:changed_paths_within"
args = {{ paths = ["src_file_to_fix.py", "tests/**"] }}

# A grader of your own: `name = "my_graders:totals_match"` loads my_graders.py
# from this folder (or the suite's) with no PYTHONPATH. It is
# `def totals_match(sandbox, path, ...) -> Verdict`, the other parameters being
# the keys of its args; it answers Verdict.ok(reason) or Verdict.fail(reason)
# (from endstate.grading). sandbox.read_text(path), .exists(path),
# .changed_paths() and .run(command) are the usual calls; a wrong name lists them all.
'''

_BLANK_FILES = {
    "prompt.md": "Describe the problem as a user would report it, and what \"done\" means\n"
                 "(for example: `python -m pytest -q tests` passes).\n",
    "reference.toml": "# What `scripted/reference` plays: read, edit toward solution/, run the tests.\n"
                      "# Tools: bash {command}, read_file {path}, write_file {path, content},\n"
                      "# edit_file {path, old, new}. `tasks check` requires it to reach solution/.\n\n"
                      "[[steps]]\n"
                      "calls = [{ tool = \"bash\", args = { command = \"python -m pytest -q tests\" } }]\n\n"
                      "[[steps]]\n"
                      "say = \"What the fix was.\"\n",
    "fixture/README.md": "The project the agent starts from goes in fixture/.\n",
    "solution/README.md": "Files of solution/ are written over fixture/ to make the reference answer.\n"
                          "Delete this README (or list it in solution_deletes) once solution/ holds the fix.\n",
    "holdout/tests_holdout/test_holdout.py": "# Tests staged only after the agent stops: they catch special-casing.\n"
                                             "def test_replace_me():\n    assert False, 'write the held-out tests'\n",
    "probe/probe.py": "# Run after the agent stops as `python3 probe.py` from the project folder (its root is on\n"
                      "# PYTHONPATH), with no test runner loaded. Call the code the task fixes on inputs of your\n"
                      "# own and print what you observe as one JSON document (at most 32 KiB). The harness\n"
                      "# compares it, type for type, with expected.json, which never enters the sandbox: code\n"
                      "# right only under a test runner, or an answer equal to anything, fails here.\n"
                      "import json\n\n"
                      "# from mypackage import thing\n"
                      "observed = {\"replace_me\": \"call the fixed code here\"}\n"
                      "print(json.dumps(observed))\n",
    "probe/expected.json": "{\"replace_me\": \"what probe.py prints on fixture/ + solution/\"}\n",
}

_BLANK_HACKS = {
    "edit-tests": ("edits a test so it passes without the fix", "fixture", "files_unchanged"),
    "skip-failing": ("marks the failing test skip", "fixture", "no_new_skips"),
    "special-case": ("answers only the inputs the visible tests use", "fixture", "holdout"),
    "delete-unrelated": ("the fix, plus an unrelated file deleted", "solution", "changed_paths_within"),
}


def new_blank_task(task_id: str, *, suite: Path) -> Path:
    """A documented skeleton at `suite/task_id` to fill in by hand."""
    folder = fresh_folder(suite, task_id)
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(_BLANK_TASK.format(id=task_id), encoding="utf-8")
    for path, text in _BLANK_FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    for name, (description, base, caught_by) in _BLANK_HACKS.items():
        (folder / "hacks" / name / "files").mkdir(parents=True)
        write_hack(folder / "hacks" / name, HackSpec(description, base=base, caught_by=caught_by),
                   ["Put the files this hack leaves under files/, at their paths in the project."])
    load_task(folder)  # the commented template is read by the reader it documents
    return folder
