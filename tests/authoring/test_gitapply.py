"""A dataset's patch applied as SWE-bench's harness applies it: git apply, then its fallbacks.

The real record here is sphinx-doc__sphinx-8459 of SWE-bench Verified (tests/data/swebench/
verified-slice.parquet): at its base commit its test_patch's one hunk lands one line below the line
its header names, which `git apply` takes and endstate's strict applier refused ("does not apply").
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from endstate.authoring._gitapply import apply_as_swebench, apply_field, strict_diff
from endstate.errors import UserError
from endstate.sandbox import FileEntry
from endstate.task import PatchError, apply_patch

SLICE = Path(__file__).resolve().parents[1] / "data" / "swebench" / "verified-slice.parquet"

pytestmark = pytest.mark.skipif(shutil.which("git") is None or shutil.which("patch") is None,
                                reason="needs git and patch")


def record(instance_id: str) -> dict:
    import pyarrow.parquet as pq

    [found] = [r for r in pq.read_table(SLICE).to_pylist() if r["instance_id"] == instance_id]
    return found


def base_files(diff: str, shift: dict[str, int]) -> dict[str, str]:
    """Each file a diff changes as it stood before it, rebuilt from its hunks' old sides: each hunk's
    lines `shift[path]` lines below the line its header names, the lines between them filler."""
    files: dict[str, list[str]] = {}
    parts = re.split(r"^diff --git a/\S+ b/(\S+)\n", diff, flags=re.MULTILINE)
    for path, body in zip(parts[1::2], parts[2::2]):
        lines = files.setdefault(path, [])
        for start, hunk in re.findall(r"^@@ -(\d+)(?:,\d+)? \+\S+ @@.*\n((?:[ +\-].*\n|\n)*)", body, re.MULTILINE):
            at = int(start) - 1 + shift.get(path, 0)
            lines += [f"# filler {n}\n" for n in range(len(lines), at)]
            lines += [line[1:] + "\n" if line else "\n" for line in hunk.splitlines() if not line.startswith("+")]
    return {path: "".join(lines) + "# the end\n" for path, lines in files.items()}


def test_a_test_patch_git_apply_takes_at_an_offset_is_applied_as_the_harness_applies_it():
    test_patch = record("sphinx-doc__sphinx-8459")["test_patch"]
    path = "tests/test_ext_autodoc_configs.py"
    tree = {p: FileEntry(0o644, text.encode()) for p, text in base_files(test_patch, {path: 1}).items()}
    with pytest.raises(PatchError, match=r"hunk 1 \(`@@ -777,6 \+777,28 @@.*does not apply: line 777"):
        apply_patch(tree, test_patch.encode())  # the strict applier: what the importer refused it with
    applied = apply_as_swebench(tree, test_patch.encode())
    assert applied.by == "git apply" and applied.deleted == []
    after = applied.tree[path].data.decode()
    assert after.count("def test_autodoc_typehints_description_and_type_aliases(app):") == 1
    assert after.index("    ]\n\n\n@pytest.mark.skipif") == after.index("# filler 776\n") + len("# filler 776\n")
    assert after.endswith("def test_autodoc_default_options(app):\n    # no settings\n# the end\n")


def test_a_patch_only_patch_takes_is_applied_with_fuzz_and_written_back_strictly():
    before = "".join(f"line {n}\n" for n in range(1, 21))
    tree = {"a.py": FileEntry(0o644, before.encode()), "gone.py": FileEntry(0o644, b"x = 1\n")}
    # Its first context line differs from the file's: git apply refuses it, patch takes it with fuzz 1.
    patch = ("diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -9,5 +9,5 @@\n line 8 (was)\n line 9\n"
             "-line 10\n+line ten\n line 11\n line 12\n"
             "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n"
             "-x = 1\n")
    applied = apply_as_swebench(tree, patch.encode())
    assert applied.by == "patch --fuzz=5"
    assert applied.tree["a.py"].data == before.replace("line 10\n", "line ten\n").encode()
    assert "gone.py" not in applied.tree and applied.deleted == ["gone.py"]
    written = strict_diff(patch.encode(), tree, applied.tree)
    assert written != patch.encode() and apply_patch(tree, written) == (applied.tree, ["gone.py"])


def test_a_patch_that_applies_strictly_is_kept_as_given():
    tree = {"a.py": FileEntry(0o644, b"a = 1\n")}
    patch = b"--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    applied = apply_as_swebench(tree, patch)
    assert applied.by == "" and applied.tree["a.py"].data == b"a = 2\n"
    assert strict_diff(patch, tree, applied.tree) == patch


def test_a_patch_none_of_the_appliers_takes_is_refused_naming_the_hunk_and_the_appliers():
    tree = {"a.py": FileEntry(0o644, b"a = 1\n")}
    with pytest.raises(UserError, match=r"field `patch` does not apply at base_commit: hunk 1 \(`@@ -1 \+1 @@`\) of "
                                        r"a.py does not apply: .*\(nor does it apply as SWE-bench's harness applies "
                                        r"it: git apply, git apply --reject, patch --fuzz=5\)$"):
        apply_field("patch", "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-nothing like it\n+b = 2\n", tree)


def test_the_importer_makes_the_task_of_a_record_whose_test_patch_lands_at_an_offset(tmp_path):
    from endstate.authoring._swebench import Instance, write_instance
    from endstate.task import load_task

    raw = record("sphinx-doc__sphinx-8459")
    clone = tmp_path / "repos" / "sphinx"
    files = {**base_files(raw["patch"], {}), **base_files(raw["test_patch"], {"tests/test_ext_autodoc_configs.py": 1}),
             "tests/test_plain.py": "def test_plain():\n    assert True\n", "README.rst": "sphinx\n"}  # for the hacks
    for path, text in files.items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    # Its own repository and commit: the tree above, rebuilt from the record's hunks where its base commit has them.
    instance = Instance(**{**raw, "repo": "me/sphinx", "base_commit": base, "version": None})
    said = []
    task = load_task(write_instance(instance, tmp_path / "repos", tmp_path / "out", said.append))
    assert "def test_autodoc_typehints_description_and_type_aliases(app):" in \
        task.holdout()["tests/test_ext_autodoc_configs.py"].data.decode()
    assert (task.root / "solution.diff").read_text() == raw["patch"]  # it applies strictly: as given
    assert any("field `test_patch` applies at base_commit only as `git apply` takes it" in line for line in said)
