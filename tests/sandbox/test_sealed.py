"""The sealed end state: caches left out, links judged by where they lead."""

from __future__ import annotations

import pytest

from endstate.sandbox._sealed import SealedSandbox, cache_paths, resolve_link, without_caches
from endstate.sandbox._tree import FileEntry

F = FileEntry(0o644, b"x = 1\n")


def test_caches_are_left_out_of_the_snapshot_and_listed():
    tree = {"pkg/mod.py": F, "pkg/__pycache__/mod.cpython-311.pyc": F, "pytest.pyc": F, "m.pyo": F,
            ".pytest_cache/v/x": F}
    assert without_caches(tree) == {"pkg/mod.py": F}
    assert cache_paths(tree) == [".pytest_cache/v/x", "m.pyo", "pkg/__pycache__/mod.cpython-311.pyc", "pytest.pyc"]


@pytest.mark.parametrize("target, inside", [
    ("real.py", True), ("../pkg/real.py", True), ("/workspace/pkg/real.py", True), ("/tmp/x.py", False),
    ("../../tmp/x.py", False), ("/workspace/../etc/passwd", False), ("sub", True),
])
def test_resolve_link_follows_targets_and_refuses_escapes(target, inside):
    tree = {"pkg/real.py": F, "pkg/link.py": FileEntry.symlink(target), "pkg/sub": FileEntry.symlink("/workspace/pkg")}
    assert (resolve_link(tree, "pkg/link.py") is not None) is inside


def test_escapes_through_a_chain_of_links_and_loops_are_caught():
    tree = {"a": FileEntry.symlink("b"), "b": FileEntry.symlink("dir/c"), "dir": FileEntry.symlink("/usr"),
            "loop1": FileEntry.symlink("loop2"), "loop2": FileEntry.symlink("loop1")}
    sealed = SealedSandbox(None, tree, {})
    assert sealed.escaping_links() == ["a -> b", "b -> dir/c", "dir -> /usr", "loop1 -> loop2", "loop2 -> loop1"]


def test_a_link_is_a_change_and_has_no_text():
    sealed = SealedSandbox(None, {"pkg/mod.py": FileEntry.symlink("/tmp/good.py")}, {"pkg/mod.py": F})
    assert sealed.changed_paths() == ["pkg/mod.py"]
    assert sealed.is_link("pkg/mod.py") and sealed.link_target("pkg/mod.py") == "/tmp/good.py"
    with pytest.raises(FileNotFoundError):
        sealed.read_text("pkg/mod.py")


def test_a_grader_is_handed_the_grader_api_and_nothing_grading_keeps():
    """What grading keeps while it grades lives in grading.Grading; the sealed sandbox offers
    exactly the names docs/graders.md lists, and a name grading keeps is refused with that list."""
    sealed = SealedSandbox(None, {"pkg/mod.py": F}, {"pkg/mod.py": F})
    public = {name for name in dir(sealed) if not name.startswith("_")} - {"GRADER_API"}
    assert public == set(SealedSandbox.GRADER_API)
    with pytest.raises(AttributeError, match="a grader may use"):
        sealed.twin_plan
