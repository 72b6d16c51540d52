"""File trees: hashing, loading fixtures, and reproducible archives."""

from __future__ import annotations

import os

import pytest

from endstate.errors import FixtureError
from endstate.sandbox import FileEntry, load_dir, tree_hash
from endstate.sandbox._tree import FIXED_MTIME, tar_to_tree, tree_to_tar

TREE = {
    "src/app.py": FileEntry(0o644, b"print('hi')\n"),
    "run.sh": FileEntry(0o755, b"#!/bin/sh\n"),
}


def test_tree_hash_is_stable_and_ignores_order_and_unimportant_mode_bits():
    again = {"run.sh": FileEntry(0o700, b"#!/bin/sh\n"), "src/app.py": FileEntry(0o600, b"print('hi')\n")}
    assert tree_hash(TREE) == tree_hash(dict(TREE)) == tree_hash(again)
    assert len(tree_hash(TREE)) == 64


@pytest.mark.parametrize("changed", [
    {**TREE, "src/app.py": FileEntry(0o644, b"print('hi!')\n")},          # bytes
    {**TREE, "run.sh": FileEntry(0o644, b"#!/bin/sh\n")},                  # executable bit
    {"src/main.py": TREE["src/app.py"], "run.sh": TREE["run.sh"]},         # path
    {**TREE, "empty": FileEntry(0o644, b"")},                              # an added empty file
    {"src/app.py": TREE["src/app.py"]},                                    # a removed file
])
def test_tree_hash_sees_every_change(changed):
    assert tree_hash(changed) != tree_hash(TREE)


def test_tree_hash_cannot_be_confused_by_moving_bytes_between_path_and_content():
    assert tree_hash({"ab": FileEntry(0o644, b"c")}) != tree_hash({"a": FileEntry(0o644, b"bc")})


def test_load_dir_prunes_vcs_folders_and_keeps_modes(tmp_path):
    for vcs in (".git", ".hg", ".svn", "sub/.git"):
        (tmp_path / vcs).mkdir(parents=True)
        (tmp_path / vcs / "HEAD").write_text("the answer")
    (tmp_path / "sub" / "code.py").write_text("x = 1\n")
    (tmp_path / "tool.sh").write_text("#!/bin/sh\n")
    (tmp_path / "tool.sh").chmod(0o775)
    (tmp_path / ".gitignore").write_text("*.pyc\n")
    tree = load_dir(tmp_path)
    assert sorted(tree) == [".gitignore", "sub/code.py", "tool.sh"]
    assert tree["tool.sh"].mode == 0o755 and tree["sub/code.py"].mode == 0o644
    assert ".git/HEAD" in load_dir(tmp_path, prune_vcs=False)


def test_load_dir_follows_links_inside_and_refuses_links_outside(tmp_path):
    fixture = tmp_path / "fixture"
    (fixture / "real").mkdir(parents=True)
    (fixture / "real" / "a.txt").write_text("a")
    (fixture / "alias.txt").symlink_to("real/a.txt")
    (fixture / "alias_dir").symlink_to("real")
    tree = load_dir(fixture)
    assert tree["alias.txt"].data == tree["alias_dir/a.txt"].data == b"a"

    (tmp_path / "secret").write_text("s")
    (fixture / "leak").symlink_to(tmp_path / "secret")
    with pytest.raises(FixtureError, match="leak"):
        load_dir(fixture)
    (fixture / "leak").unlink()
    (fixture / "up").symlink_to("..")
    with pytest.raises(FixtureError, match="up"):
        load_dir(fixture)


def test_missing_fixture_is_a_fixture_error(tmp_path):
    with pytest.raises(FixtureError, match="does not exist"):
        load_dir(tmp_path / "nope")


def test_archives_are_reproducible_and_normalised(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("f")
    (tmp_path / "x.sh").write_text("x")
    (tmp_path / "x.sh").chmod(0o700)
    os.utime(tmp_path / "a" / "f.txt", (1_700_000_000, 1_700_000_000))
    first = tree_to_tar(load_dir(tmp_path))
    os.utime(tmp_path / "a" / "f.txt", (1_800_000_000, 1_800_000_000))
    (tmp_path / "x.sh").chmod(0o755)
    second = tree_to_tar(load_dir(tmp_path))
    assert first == second

    import io
    import tarfile
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {"a", "a/f.txt", "x.sh"}
    assert {m.mtime for m in members.values()} == {FIXED_MTIME}
    assert (members["x.sh"].mode, members["a/f.txt"].mode) == (0o755, 0o644)
    assert tar_to_tree(first) == load_dir(tmp_path)


# -- links -----------------------------------------------------------------------------
def test_a_link_is_an_entry_of_its_own_in_the_hash():
    linked = {**TREE, "src/app.py": FileEntry.symlink("/tmp/app.py")}
    other = {**TREE, "src/app.py": FileEntry.symlink("/tmp/other.py")}
    assert len({tree_hash(TREE), tree_hash(linked), tree_hash(other)}) == 3
    # A regular file's hash is what it always was: committed tree hashes stay valid.
    assert tree_hash({"a": FileEntry(0o644, b"x")}) == tree_hash({"a": FileEntry(0o644, b"x", "")})


def test_links_survive_the_archive_round_trip_and_hard_links_read_as_files():
    import io
    import tarfile

    tree = {**TREE, "src/link.py": FileEntry.symlink("app.py"), "out": FileEntry.symlink("/etc/passwd")}
    assert tar_to_tree(tree_to_tar(tree)) == tree
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("ws/a.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"abc"))
        hard = tarfile.TarInfo("ws/b.txt")
        hard.type, hard.linkname = tarfile.LNKTYPE, "ws/a.txt"
        tar.addfile(hard)
    assert tar_to_tree(buffer.getvalue(), strip="ws/") == {"a.txt": FileEntry(0o644, b"abc"),
                                                           "b.txt": FileEntry(0o644, b"abc")}


def test_reading_an_archive_stops_at_its_ceiling():
    from endstate.sandbox._tree import TreeTooLarge

    big = {f"f{i}": FileEntry(0o644, b"x" * 1000) for i in range(10)}
    assert len(tar_to_tree(tree_to_tar(big), max_bytes=10_000)) == 10
    with pytest.raises(TreeTooLarge):
        tar_to_tree(tree_to_tar(big), max_bytes=9_999)


def test_sealing_refuses_a_link_whose_target_is_not_utf8_naming_both():
    """The target is quoted by the graders, the diff and the results, which are text: it is
    refused as a name that is not UTF-8 is, and read whole anywhere but in sealing."""
    from endstate.sandbox._tree import TreeRefused

    target = b"/tmp/x\xff".decode("utf-8", "surrogateescape")
    archive = tree_to_tar({**TREE, "src/l.py": FileEntry.symlink(target), "src/ok.py": FileEntry.symlink("app.py")})
    with pytest.raises(TreeRefused) as caught:
        tar_to_tree(archive, sealing=True)
    assert str(caught.value) == ("what sealing cannot carry: 'src/l.py' (a link to '/tmp/x\\\\xff', "
                                 "a target that is not UTF-8)")
    assert tar_to_tree(archive)["src/l.py"].link == target
