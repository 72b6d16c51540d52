"""Overlays as unified diffs: made from two trees, applied strictly, read by git too."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.sandbox._tree import FileEntry, load_dir
from endstate.task import load_task
from endstate.task._patch import PatchError, apply_patch, make_patch, write_overlay_diff

BEFORE = {
    "pkg/mod.py": FileEntry(0o644, b"".join(b"line %d\n" % n for n in range(1, 41))),
    "pkg/crlf.txt": FileEntry(0o644, b"one\r\ntwo\r\nthree\r\n"),
    "pkg/latin.txt": FileEntry(0o644, b"caf\xe9\nna\xefve\n"),
    "pkg/tail.txt": FileEntry(0o644, b"no newline at the end"),
    "run.sh": FileEntry(0o644, b"echo hi\n"),
    "gone.txt": FileEntry(0o644, b"bye\n"),
    "empty.txt": FileEntry(0o644, b""),
}


def _after():
    after = dict(BEFORE)
    lines = BEFORE["pkg/mod.py"].data.split(b"\n")
    lines[2] = b"line three"
    lines[30] = b"line thirty-one\nan added line"
    after["pkg/mod.py"] = FileEntry(0o644, b"\n".join(lines))
    after["pkg/crlf.txt"] = FileEntry(0o644, b"one\r\nTWO\r\nthree\r\n")
    after["pkg/latin.txt"] = FileEntry(0o644, b"caf\xe9\nna\xefve!\n")
    after["pkg/tail.txt"] = FileEntry(0o644, b"no newline at the end, still")
    after["run.sh"] = FileEntry(0o755, b"echo hi\n")
    after["new/file.py"] = FileEntry(0o644, b"x = 1\n")
    after["new/empty.py"] = FileEntry(0o644, b"")
    del after["gone.txt"]
    del after["empty.txt"]
    return after


def test_a_made_diff_applies_back_to_the_same_tree():
    after = _after()
    patch = make_patch(BEFORE, after)
    applied, deleted = apply_patch(BEFORE, patch)
    assert applied == after
    assert sorted(deleted) == ["empty.txt", "gone.txt"]
    assert make_patch(BEFORE, after) == patch  # same trees, same bytes
    assert make_patch(BEFORE, BEFORE) == b""


def _write(root: Path, tree):
    for path, entry in tree.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(entry.data)
        (root / path).chmod(entry.mode)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_reads_the_diffs_made_here_and_they_read_the_diffs_git_makes(tmp_path):
    after = _after()
    _write(tmp_path, BEFORE)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "before"], check=True)
    (tmp_path / "ours.diff").write_bytes(make_patch(BEFORE, after))
    subprocess.run([*git, "apply", "ours.diff"], check=True)
    (tmp_path / "ours.diff").unlink()
    assert load_dir(tmp_path) == after
    subprocess.run([*git, "add", "-A"], check=True)
    theirs = subprocess.run([*git, "diff", "--cached", "HEAD"], check=True, capture_output=True).stdout
    assert apply_patch(BEFORE, theirs)[0] == after


def test_a_hunk_that_does_not_apply_names_the_file_the_hunk_and_the_line():
    patch = make_patch(BEFORE, _after())
    moved = dict(BEFORE, **{"pkg/mod.py": FileEntry(0o644, b"inserted\n" + BEFORE["pkg/mod.py"].data)})
    with pytest.raises(PatchError, match=r"hunk 1 \(`@@ -1,6 \+1,6 @@`\) of pkg/mod.py does not apply: line 1 is "
                                         r"'inserted' where the diff expects 'line 1'"):
        apply_patch(moved, patch)
    with pytest.raises(PatchError, match="gone.txt: the diff changes it, but there is no such file"):
        apply_patch({p: e for p, e in BEFORE.items() if p != "gone.txt"}, patch)
    with pytest.raises(PatchError, match="new/file.py: the diff creates it, but it already exists"):
        apply_patch(dict(BEFORE, **{"new/file.py": FileEntry(0o644, b"")}), patch)


def test_renames_apply_and_short_copied_binary_and_empty_diffs_are_refused():
    cut = b"--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n-echo hi\n"
    with pytest.raises(PatchError, match="run.sh: hunk `@@ -1,2 \\+1,2 @@` is cut short"):
        apply_patch(BEFORE, cut)
    renamed = b"diff --git a/run.sh b/go.sh\nsimilarity index 100%\nrename from run.sh\nrename to go.sh\n"
    assert apply_patch(BEFORE, renamed) == ({**{p: e for p, e in BEFORE.items() if p != "run.sh"},
                                             "go.sh": BEFORE["run.sh"]}, ["run.sh"])
    copied = b"diff --git a/run.sh b/go.sh\nsimilarity index 100%\ncopy from run.sh\ncopy to go.sh\n"
    with pytest.raises(PatchError, match="copies are not supported"):
        apply_patch(BEFORE, copied)
    binary = b"diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n"
    with pytest.raises(PatchError, match="binary patches are not supported"):
        apply_patch(BEFORE, binary)
    with pytest.raises(PatchError, match="changes no file"):
        apply_patch(BEFORE, b"just words\n")


def _task(tmp_path: Path) -> Path:
    folder = tmp_path / "t1"
    _write(folder / "fixture", BEFORE)
    (folder / "prompt.md").write_text("fix it\n")
    (folder / "task.toml").write_text('id = "t1"\ncategory = "bugfix"\n[[graders]]\nname = "endstate.grading:tests_pass"\n')
    return folder


def test_a_task_may_carry_its_solution_and_its_hacks_as_diffs(tmp_path):
    folder = _task(tmp_path)
    after = _after()
    (folder / "solution.diff").write_bytes(make_patch(BEFORE, after))
    write_overlay_diff(folder / "hacks" / "stub", after, {"pkg/tail.txt": FileEntry(0o644, b"")})
    (folder / "hacks" / "stub" / "hack.toml").write_text('description = "d"\nbase = "solution"\ncaught_by = "holdout"\n')
    task = load_task(folder)
    assert task.solution() == after
    hack = task.hacks()["stub"]
    assert hack.tree == dict(after, **{"pkg/tail.txt": FileEntry(0o644, b"")})
    assert sorted(p.name for p in (folder / "hacks" / "stub").iterdir()) == ["hack.toml", "overlay.diff"]


def test_a_diff_that_does_not_apply_is_a_manifest_error_naming_the_task_and_file(tmp_path):
    folder = _task(tmp_path)
    (folder / "solution").mkdir()
    hack = folder / "hacks" / "broken"
    hack.mkdir(parents=True)
    (hack / "hack.toml").write_text('description = "d"\ncaught_by = "holdout"\n')
    (hack / "overlay.diff").write_bytes(b"--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo bye\n+echo ok\n")
    with pytest.raises(ManifestError, match=r"task t1: .*hacks/broken/overlay.diff: hunk 1 .* of run.sh does not "
                                            r"apply: line 1 is 'echo hi' where the diff expects 'echo bye'"):
        load_task(folder).hacks()
