"""`endstate tasks new`: a task made from a fix commit of a small git repository made here."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from endstate.agent._policy import Policy
from endstate.authoring._blank import new_blank_task
from endstate.authoring._fix import held_out_targets, split_fix
from endstate.authoring._new import new_task_from_fix
from endstate.checks._check import check_task, grade_tree
from endstate.checks._reference_check import play_in_memory
from endstate.errors import UserError
from endstate.grading import Outcome
from endstate.run import resolve_graders
from endstate.sandbox import DEFAULT_IMAGE
from endstate.sandbox._tree import load_dir, tree_hash
from endstate.task import load_task
from endstate.task._patch import patch_paths

BUGGY = textwrap.dedent('''\
    """Chunking helpers."""


    def chunks(items, size):
        """Split `items` into lists of `size`; the last may be shorter."""
        if size < 1:
            raise ValueError("size must be positive")
        out = []
        for start in range(0, len(items) - size + 1, size):
            out.append(list(items[start:start + size]))
        return out


    def first(items, default=None):
        for item in items:
            return item
        return default
''')
FIXED = BUGGY.replace("range(0, len(items) - size + 1, size)", "range(0, len(items), size)")
TESTS = textwrap.dedent('''\
    import pytest

    from pkg.chunking import chunks, first


    def test_even():
        assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


    def test_size_checked():
        with pytest.raises(ValueError):
            chunks([1], 0)


    class TestFirst:
        def test_first(self):
            assert first([5, 6]) == 5

        def test_default(self):
            assert first([], 7) == 7
''')
REGRESSION = TESTS + textwrap.dedent('''\


    def test_short_last_chunk_is_kept():
        assert chunks([1, 2, 3], 2) == [[1, 2], [3]]
''')


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org", GIT_COMMITTER_NAME="A",
               GIT_COMMITTER_EMAIL="a@example.org", GIT_AUTHOR_DATE="2020-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2020-01-01T00:00:00Z")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    files = {"pkg/__init__.py": "", "pkg/chunking.py": BUGGY, "tests/__init__.py": "", "tests/test_chunking.py": TESTS,
             "README.md": "# pkg\n", "LICENSE": "MIT\n", "tools/release.sh": "#!/bin/sh\necho release\n"}
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    (repo / "tools/release.sh").chmod(0o755)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Initial")
    (repo / "pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION)
    git(repo, "commit", "-q", "-am", "Keep the short last chunk\n\nchunks() dropped a last chunk shorter than size.")
    return repo


def test_the_fix_is_split_into_fixture_solution_and_holdout(repo):
    split = split_fix(repo, "HEAD")
    assert split.subject == "Keep the short last chunk"
    assert "dropped a last chunk" in split.body
    # The fixture is the parent tree, no VCS, modes kept.
    assert split.fixture["pkg/chunking.py"].data.decode() == BUGGY
    assert split.fixture["tests/test_chunking.py"].data.decode() == TESTS
    assert split.fixture["tools/release.sh"].mode == 0o755
    assert not any(p.startswith(".git") for p in split.fixture)
    assert set(split.solution) == {"pkg/chunking.py"} and split.solution_deletes == []
    assert split.holdout["tests/test_chunking.py"].data.decode() == REGRESSION
    assert split.fixed_paths == ["pkg/chunking.py"]
    assert split.dropped_links == []
    # A range names the same fix; visible tests put the regression test in the fixture.
    assert split_fix(repo, "HEAD~1..HEAD").solution == split.solution
    visible = split_fix(repo, "HEAD", visible_tests=True)
    assert visible.fixture["tests/test_chunking.py"].data.decode() == REGRESSION


def test_the_holdout_runs_the_tests_the_fix_added_or_changed(repo):
    changed = REGRESSION.replace("assert first([], 7) == 7", "assert first([], 8) == 8")
    (repo / "tests/test_chunking.py").write_text(changed)
    (repo / "tests/test_new.py").write_text("def test_new():\n    pass\n")
    (repo / "pkg/chunking.py").write_text(FIXED + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "More")
    split = split_fix(repo, "HEAD~1..HEAD")
    assert held_out_targets(split, split.parent_tests) == ["tests/test_chunking.py::TestFirst::test_default",
                                                            "tests/test_new.py"]
    split = split_fix(repo, "HEAD~2..HEAD")
    assert held_out_targets(split, split.parent_tests) == [
        "tests/test_chunking.py::TestFirst::test_default", "tests/test_chunking.py::test_short_last_chunk_is_kept",
        "tests/test_new.py"]


def test_symbolic_links_are_named_not_silently_lost(repo):
    (repo / "docs").mkdir()
    (repo / "docs/README.md").symlink_to("../README.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Link")
    (repo / "pkg/chunking.py").write_text(FIXED + "\n")
    (repo / "tests/test_chunking.py").write_text(REGRESSION + "\n")
    git(repo, "commit", "-q", "-am", "Fix")
    split = split_fix(repo, "HEAD")
    assert split.dropped_links == ["docs/README.md"] and "docs/README.md" not in split.fixture


def test_bad_input_is_one_clear_error(repo, tmp_path):
    with pytest.raises(UserError, match="is not a commit"):
        split_fix(repo, "no-such-rev")
    with pytest.raises(UserError, match="first commit"):
        split_fix(repo, "HEAD~1")
    with pytest.raises(UserError, match="not a git repository"):
        split_fix(tmp_path, "HEAD")
    (repo / "tests/test_chunking.py").write_text(REGRESSION + "\n")
    git(repo, "commit", "-q", "-am", "Only tests")
    with pytest.raises(UserError, match="only test files"):
        split_fix(repo, "HEAD")
    # The regression test elsewhere than the default globs: --tests says where.
    with pytest.raises(UserError, match="changes no test .* --tests GLOB"):
        split_fix(repo, "HEAD~1", test_globs=("checks/**",))


def test_blank_skeleton_loads_and_names_every_part(tmp_path):
    folder = new_blank_task("bugfix-mine", suite=tmp_path)
    task = load_task(folder)
    assert task.id == "bugfix-mine"
    assert sorted(task.hacks()) == ["delete-unrelated", "edit-tests", "skip-failing", "special-case"]
    assert [s.name.rsplit(":", 1)[1] for s in task.manifest.graders] == [
        "tests_pass", "files_unchanged", "no_new_skips", "holdout", "changed_paths_within"]
    with pytest.raises(UserError, match="already exists"):
        new_blank_task("bugfix-mine", suite=tmp_path)


def test_blank_skeleton_is_self_contained_and_has_a_probe(tmp_path):
    folder = new_blank_task("bugfix-mine", suite=tmp_path)
    script, expected = load_task(folder).probe()
    # The probe template is a real probe: it loads, and until it is written it disagrees
    # with expected.json on every end state (tasks check says so on the solution row).
    assert "print(json.dumps(" in script and "replace_me" in expected
    assert (folder / "probe" / "expected.json").is_file()
    # Nothing in the skeleton points into endstate's own repository: a user's suite has no
    # tasks/README.md, and no README of endstate beside it.
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "tasks/README" not in text and "(README)" not in text, path
    toml = (folder / "task.toml").read_text()
    for part in ("fixture/", "solution/", "holdout/", "probe/", "hacks/", "reference.toml", "my_graders.py"):
        assert part in toml


@pytest.mark.docker
def test_a_task_made_from_the_fix_checks_out(repo, tmp_path):
    suite = tmp_path / "suite"
    folder = new_task_from_fix("bugfix-short-chunk", repo=repo, fix="HEAD", suite=suite, backend="docker",
                               image=DEFAULT_IMAGE)
    task = load_task(folder)
    # Honest counts: 4 visible tests + the regression test run on the solution; the holdout runs the
    # one test the fix added, by node id.
    args = {s.name.rsplit(":", 1)[1]: s.args for s in task.manifest.graders}
    assert args["tests_pass"] == {"command": "python -m pytest -q tests", "min_tests": 5}
    assert args["holdout"] == {"command": "python -m pytest -q tests/test_chunking.py::test_short_last_chunk_is_kept",
                               "min_tests": 1}
    # Globs that match nothing in the fixture are left out; existing tests frozen, new ones allowed.
    assert args["files_unchanged"] == {"paths": ["tests/**", "**/test_*.py"], "allow_new": ["tests/**", "**/test_*.py"]}
    assert args["changed_paths_within"]["paths"] == ["pkg/chunking.py", "tests/**", "**/test_*.py"]
    assert (folder / "fixture/tools/release.sh").stat().st_mode & 0o111
    # The fix is a unified diff over the fixture, not whole copies of the files it changes.
    assert not (folder / "solution").exists()
    assert patch_paths((folder / "solution.diff").read_bytes()) == ["pkg/chunking.py"]
    assert "solution_deletes" not in (folder / "task.toml").read_text()
    assert sorted(task.hacks()) == ["delete-unrelated", "edit-tests", "skip-failing", "special-case"]
    assert "Keep the short last chunk" in task.prompt
    # The reference trajectory edits (not rewrites) the file and reaches the solution.
    calls = [c for step in task.reference().steps for c in step.calls]
    assert [c.tool for c in calls if c.tool in ("edit_file", "write_file")] == ["edit_file"]
    played, problems = play_in_memory(calls, task.fixture(), Policy.load())
    assert problems == [] and tree_hash(played) == tree_hash(task.solution())
    # And the folder is a task tasks check accepts, reference row included.
    report = check_task(task, resolve_graders(task), "docker", DEFAULT_IMAGE)
    assert report.ok, report
    rows = {row.case: row for row in report.rows}
    assert "holdout" in rows["fixture"].failing  # (tests_pass too: it runs with holdout/ staged)
    assert "holdout" in rows["hack:special-case"].failing
    assert rows["hack:edit-tests"].failing == ["files_unchanged"]
    assert rows["reference"].outcome == "solution"
    # Made twice from the same fix, the folder is byte-for-byte the same.
    again = new_task_from_fix("bugfix-short-chunk", repo=repo, fix="HEAD", suite=tmp_path / "again",
                              backend="docker", image=DEFAULT_IMAGE)
    assert tree_hash(load_dir(again)) == tree_hash(load_dir(folder))


@pytest.mark.docker
def test_failing_solution_tests_refuse_the_task_and_leave_nothing(repo, tmp_path):
    (repo / "tests/test_other.py").write_text("def test_broken():\n    assert False\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A broken test")
    (repo / "pkg/chunking.py").write_text(FIXED.replace("positive", "at least 1"))
    (repo / "tests/test_chunking.py").write_text(REGRESSION + "\n\ndef test_more():\n    pass\n")
    git(repo, "commit", "-q", "-am", "Reword")
    with pytest.raises(UserError, match=r"1 failure\(s\) and 0 error\(s\) in the sandbox \(tests\.test_other::test_broken\): "
                                        r"tests\.test_other::test_broken: assert False\. The task's tests"):
        new_task_from_fix("bugfix-x", repo=repo, fix="HEAD", suite=tmp_path / "s", backend="docker",
                          image=DEFAULT_IMAGE)
    assert not (tmp_path / "s" / "bugfix-x").exists()


def test_the_command_line_is_thin_and_refuses_half_a_fix(repo, tmp_path, cli):
    half = cli.invoke("tasks", "new", "bugfix-x", "--suite", str(tmp_path), "--repo", str(repo))
    assert half.code == 2 and "--repo and --fix go together" in half.output
    assert "Traceback" not in half.output
    blank = cli.invoke("tasks", "new", "bugfix-blank", "--suite", str(tmp_path))
    assert blank.code == 0 and (tmp_path / "bugfix-blank" / "task.toml").is_file()
    unknown = cli.invoke("tasks", "new", "bugfix-y", "--suite", str(tmp_path), "--repo", str(repo), "--fix", "nope",
                         "--sandbox", "local")
    assert unknown.code == 2 and "'nope' is not a commit" in unknown.output


@pytest.mark.docker
def test_visible_tests_put_the_failing_regression_test_in_front_of_the_agent(repo, tmp_path):
    folder = new_task_from_fix("bugfix-visible", repo=repo, fix="HEAD", suite=tmp_path, backend="docker",
                               image=DEFAULT_IMAGE, visible_tests=True)
    task = load_task(folder)
    assert (folder / "fixture/tests/test_chunking.py").read_text() == REGRESSION
    graders = resolve_graders(task)
    report = check_task(task, graders, "docker", DEFAULT_IMAGE)
    assert report.ok, report
    # The visible suite itself now fails on the untouched fixture (the check's fixture row stops at the
    # held-out tests' failure: every grader is asked here).
    fixture = task.fixture()
    verdicts = grade_tree(task, graders, fixture, fixture, task.holdout(), "docker", DEFAULT_IMAGE)
    assert {"tests_pass", "holdout"} <= {name for name, outcome, _ in verdicts if outcome is Outcome.FAIL}, verdicts


def test_a_merge_is_split_against_its_first_parent_and_named_by_its_body(repo):
    git(repo, "checkout", "-q", "-b", "topic")
    (repo / "pkg/chunking.py").write_text(FIXED.replace("return default", "return default  # nothing there"))
    (repo / "tests/test_chunking.py").write_text(REGRESSION + "\n\ndef test_none():\n    assert first([]) is None\n")
    git(repo, "commit", "-q", "-am", "Say what first() gives back")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("# pkg\n\nchunks, first\n")
    git(repo, "commit", "-q", "-am", "Document the helpers")
    git(repo, "merge", "-q", "--no-ff", "topic", "-m", "Merge pull request #7 from a/topic\n\nfirst() on nothing")
    split = split_fix(repo, "HEAD")
    assert split.base == git(repo, "rev-parse", "HEAD^1").strip()  # the main line before the merge
    assert split.subject == "first() on nothing" and "pull request #7" in split.body
    assert list(split.solution) == ["pkg/chunking.py"] and list(split.holdout) == ["tests/test_chunking.py"]


def test_the_prompt_holds_the_commit_body_and_the_issue_text(repo):
    from endstate.authoring._new import _prompt

    prompt = _prompt(split_fix(repo, "HEAD"), "python -m pytest -q tests", "chunks([1, 2, 3], 2) loses the 3\n")
    assert "chunks() dropped a last chunk" in prompt and "chunks([1, 2, 3], 2) loses the 3" in prompt


def test_data_files_the_fix_adds_are_held_out_through_the_module_that_reads_them(repo):
    (repo / "tests/cases").mkdir()
    (repo / "tests/cases/short.json").write_text('{"items": [1, 2, 3], "size": 2}\n')
    (repo / "tests/test_cases.py").write_text('import json, pathlib\n\nCASES = pathlib.Path(__file__).parent / "cases"\n\n\n'
                                              'def test_cases():\n    for case in CASES.glob("*.json"):\n'
                                              '        json.loads(case.read_text())\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Case files")
    (repo / "pkg/chunking.py").write_text(FIXED.replace("default=None", "default=0"))
    (repo / "tests/cases/empty.json").write_text('{"items": [], "size": 2}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first() defaults to 0")
    split = split_fix(repo, "HEAD")
    assert list(split.holdout) == ["tests/cases/empty.json"]
    assert held_out_targets(split, split.parent_tests) == ["tests/test_cases.py"]


def test_a_test_changed_in_a_mixin_holds_out_its_whole_module(repo):
    mixin = ("import unittest\n\n\nclass ChunkChecks:\n    def test_even(self):\n        pass\n\n\n"
             "class ChunkTest(ChunkChecks, unittest.TestCase):\n    pass\n")
    (repo / "tests/test_mixin.py").write_text(mixin)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Mixin tests")
    (repo / "pkg/chunking.py").write_text(FIXED.replace("default=None", "default=0"))
    (repo / "tests/test_mixin.py").write_text(mixin.replace("pass\n\n\n", "assert True\n\n\n", 1))
    git(repo, "commit", "-q", "-am", "first() defaults to 0")
    split = split_fix(repo, "HEAD")
    assert held_out_targets(split, split.parent_tests) == ["tests/test_mixin.py"]  # no ChunkChecks::test_even id


def test_tests_the_fix_rewrites_or_removes_are_out_of_the_agents_view(repo):
    """Their old versions can fail on a correct fix: the agent would see a failure it may only
    leave, or 'fix' by editing a test (tampering to files_unchanged). The new versions are held out."""
    rewritten = REGRESSION.replace("assert first([], 7) == 7", "assert first([], 0) == 0")
    rewritten = rewritten.replace("def test_size_checked():\n    with pytest.raises(ValueError):\n"
                                  "        chunks([1], 0)\n\n\n", "")
    (repo / "pkg/chunking.py").write_text(FIXED.replace("default=None", "default=0"))
    (repo / "tests/test_chunking.py").write_text(rewritten)
    git(repo, "commit", "-q", "-am", "first() defaults to 0")
    split = split_fix(repo, "HEAD")
    visible = split.fixture["tests/test_chunking.py"].data.decode()
    assert visible == REGRESSION.replace("\n    def test_default(self):\n        assert first([], 7) == 7\n", "") \
        .replace("\n\ndef test_size_checked():\n    with pytest.raises(ValueError):\n        chunks([1], 0)\n", "")
    assert split.parent_tests["tests/test_chunking.py"].data.decode() == REGRESSION  # what the fix changed
    assert held_out_targets(split, split.parent_tests) == ["tests/test_chunking.py::TestFirst::test_default"]
    # With --visible-tests the agent sees the new versions themselves.
    assert split_fix(repo, "HEAD", visible_tests=True).fixture["tests/test_chunking.py"].data.decode() == rewritten
