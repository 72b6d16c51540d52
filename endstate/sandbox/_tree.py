"""File trees held in memory: what a fixture is, and what a sealed sandbox was.

A `Tree` maps a relative POSIX path to a `FileEntry`: a regular file (mode bits
and bytes) or a symbolic link (its target, kept as written). Directories are
implied by paths; other kinds of file (fifos, sockets, devices) are not part of a
tree, and neither is a name (or a link's target) that is not UTF-8: read for sealing
(`unsealable`), a workspace holding one is refused, naming it, rather than hashed without it.
Two trees with the same entries have the same `tree_hash`, wherever they came
from, which is what makes a sealed end state comparable across runs and backends.
A link is an entry like any other: it changes the hash, and the tree handed to
the graders holds it as a link, never as whatever it pointed at.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from endstate.errors import FixtureError

__all__ = [
    "FileEntry",
    "Tree",
    "VCS_DIRS",
    "tree_hash",
    "load_dir",
    "normalise_mode",
    "tree_to_tar",
    "add_tree",
    "add_folder",
    "harness_tar",
    "ROOT_OWNERS",
    "tar_to_tree",
    "overlay",
    "TreeTooLarge",
    "TreeRefused",
    "unsealable",
]

#: Version-control folders never copied into a sandbox: their history can hold the answer.
VCS_DIRS = frozenset({".git", ".hg", ".svn"})

#: Fixed mtime for every file put into a sandbox, so copies are reproducible.
FIXED_MTIME = 946684800  # 2000-01-01T00:00:00Z
#: The access time the harness gives what it writes into a grading container: in the future,
#: so that reading a file there changes nothing (relatime updates an access time only when it
#: is older than the file's change, or a day old). A process cannot leave a trace of what it
#: read for a later process to find.
FROZEN_ATIME = 4102444800  # 2100-01-01T00:00:00Z


class FileEntry(msgspec.Struct, frozen=True):
    mode: int
    data: bytes
    #: The target of a symbolic link, as written; empty for a regular file.
    link: str = ""

    @property
    def is_link(self) -> bool:
        return bool(self.link)

    @classmethod
    def symlink(cls, target: str) -> "FileEntry":
        return cls(0o777, b"", target)


class TreeTooLarge(Exception):
    """A tree read from a sandbox passed the byte ceiling it was read with."""


class TreeRefused(Exception):
    """A tree read for sealing holds what a Tree cannot carry faithfully (see `unsealable`)."""


Tree = dict[str, FileEntry]

#: File kinds a workspace may hold that a Tree has no entry for.
_KINDS = {tarfile.FIFOTYPE: "a fifo", tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device"}


def _escaped(text: str) -> str | None:
    """`text` with the bytes that are not UTF-8 escaped; None when it is UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return None


def unsealable(name: str, kind: str = "", target: str = "") -> str | None:
    """Why an entry of a workspace cannot be sealed (`kind`: what it is, if not a file, link or
    folder; `target`: a link's), naming it with its bytes escaped; None when it can. A link's
    target is text the graders, the diff and the results quote, so it must be UTF-8 as a name is."""
    shown = _escaped(name)
    if shown is not None:
        return f"{shown!r} (a name that is not UTF-8)"
    if kind:
        return f"{name!r} ({kind})"
    shown = _escaped(target)
    return f"{name!r} (a link to {shown!r}, a target that is not UTF-8)" if shown is not None else None


def _refuse(refused: list[str]) -> None:
    if refused:
        more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
        raise TreeRefused(f"what sealing cannot carry: {'; '.join(refused[:5])}{more}")


def normalise_mode(mode: int) -> int:
    """Keep only what matters for a task: executable or not."""
    return 0o755 if mode & 0o111 else 0o644


def tree_hash(tree: Tree) -> str:
    """sha256 over sorted paths, each with its normalised mode and content digest."""
    digest = hashlib.sha256()
    for path in sorted(tree):
        entry = tree[path]
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")  # a name's own bytes
        if entry.link:  # a link hashes as a link: its kind and target, nothing it points at
            digest.update(b"link\0" + hashlib.sha256(entry.link.encode("utf-8", "surrogateescape")).digest())
            continue
        digest.update(f"{normalise_mode(entry.mode):o}".encode() + b"\0")
        digest.update(hashlib.sha256(entry.data).digest())
    return digest.hexdigest()


def load_dir(root: Path, *, prune_vcs: bool = True, what: str = "fixture") -> Tree:
    """Read a folder into a Tree.

    Prunes VCS folders (unless told not to), follows symlinks that stay inside
    `root` and refuses, naming the link, any that resolve outside it.
    """
    root = Path(root)
    if not root.is_dir():
        raise FixtureError(f"{what} folder {root} does not exist: create it or fix the task's path")
    real_root = root.resolve()
    tree: Tree = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        if prune_vcs:
            dirnames[:] = [d for d in dirnames if d not in VCS_DIRS]
        dirnames.sort()
        for name in list(dirnames):
            link = here / name
            if link.is_symlink():
                _check_inside(link, real_root, what)
                # A link to a folder inside the fixture: walk it as if it were there.
                for sub_path, entry in load_dir(link.resolve(), prune_vcs=prune_vcs, what=what).items():
                    tree[(link.relative_to(root) / sub_path).as_posix()] = entry
                dirnames.remove(name)
        for name in sorted(filenames):
            path = here / name
            if path.is_symlink():
                _check_inside(path, real_root, what)
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                continue
            rel = path.relative_to(root).as_posix()
            tree[rel] = FileEntry(normalise_mode(info.st_mode), path.read_bytes())
    return tree


def _check_inside(link: Path, real_root: Path, what: str) -> None:
    target = link.resolve()
    if target != real_root and real_root not in target.parents:
        raise FixtureError(
            f"{what} symlink {link} points outside the {what} (to {os.readlink(link)}): "
            "replace it with a copy of the file or remove it"
        )


def overlay(base: Tree, top: Tree) -> Tree:
    """`base` with every file of `top` written over it."""
    merged = dict(base)
    merged.update(top)
    return merged


def tree_to_tar(tree: Tree, *, prefix: str = "", uid: int = 0, gid: int = 0, root_dir: str = "") -> bytes:
    """A tar archive of the tree with fixed mtimes, owners and modes; links stay links.

    `root_dir` adds an entry for the folder the archive is unpacked into (owned
    like the rest), so that its owner can be set too.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        add_tree(tar, tree, prefix=prefix, uid=uid, gid=gid, root_dir=root_dir)
    return buffer.getvalue()


def _times(info: tarfile.TarInfo, frozen: bool) -> tarfile.TarInfo:
    info.mtime = FIXED_MTIME
    if frozen:  # honoured by the engine's unpacking; tar in a container is followed by a `touch -a`
        info.pax_headers = {"atime": str(FROZEN_ATIME)}
    return info


def add_folder(tar: tarfile.TarFile, name: str, *, uid: int = 0, gid: int = 0, mode: int = 0o755,
               frozen: bool = False) -> None:
    """A folder entry, mode 755 unless told, fixed mtime (`frozen`: and FROZEN_ATIME)."""
    info = _times(tarfile.TarInfo(name), frozen)
    info.type = tarfile.DIRTYPE
    info.mode, info.uid, info.gid = mode, uid, gid
    tar.addfile(info)


def add_tree(tar: tarfile.TarFile, tree: Tree, *, prefix: str = "", uid: int = 0, gid: int = 0,
             root_dir: str = "", folder_mode: int = 0o755, frozen: bool = False,
             file_uid: Callable[[str, FileEntry], int] | None = None) -> None:
    """Write `tree` into an open archive, as `tree_to_tar` describes (folders of `folder_mode`;
    `file_uid`: each file's owner and group, where not `uid`)."""
    made: set[str] = set()
    if root_dir:
        add_folder(tar, root_dir, uid=uid, gid=gid, mode=folder_mode, frozen=frozen)
    for path in sorted(tree):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in made:
                made.add(folder)
                add_folder(tar, prefix + folder, uid=uid, gid=gid, mode=folder_mode, frozen=frozen)
        entry = tree[path]
        info = _times(tarfile.TarInfo(prefix + path), frozen)
        if entry.link:
            info.type, info.linkname = tarfile.SYMTYPE, entry.link
            info.mode, info.uid, info.gid = 0o777, uid, gid
            tar.addfile(info)
            continue
        info.size = len(entry.data)
        owner = (uid, gid) if file_uid is None else (file_uid(path, entry),) * 2
        info.mode, (info.uid, info.gid) = normalise_mode(entry.mode), owner
        tar.addfile(info, io.BytesIO(entry.data))


def tar_to_tree(data: bytes | io.RawIOBase | io.BufferedIOBase, *, strip: str = "",
                max_bytes: int | None = None, sealing: bool = False) -> Tree:
    """Regular files and symlinks of a tar archive (bytes or a stream) as a Tree,
    with `strip` removed from names (`sealing`: TreeRefused, naming them, for entries
    `unsealable` says a Tree cannot carry; otherwise those are left out).

    A hard link becomes a regular file with its target's bytes (it is one). With
    `max_bytes`, reading stops with TreeTooLarge as soon as the files' bytes pass
    it, so an oversized archive is never held in memory whole.
    """
    fileobj = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
    tree: Tree = {}
    total = 0
    refused: list[str] = []
    # Stream mode ("r|"): members are read in order and never all kept, so memory is
    # bounded by the tree itself. Hard links point back at a member already read.
    with tarfile.open(fileobj=fileobj, mode="r|*") as tar:
        for member in tar:
            name = member.name
            if strip and name.startswith(strip):
                name = name[len(strip):]
            while name.startswith(("./", "/")):
                name = name.removeprefix("./").removeprefix("/")
            if not name:
                continue
            why = unsealable(name, _KINDS.get(member.type, ""), member.linkname if member.issym() else "") \
                if sealing else None
            if why:
                refused.append(why)
                continue
            if member.issym():
                tree[name] = FileEntry.symlink(member.linkname)
            elif member.islnk():
                target = member.linkname
                if strip and target.startswith(strip):
                    target = target[len(strip):]
                source = tree.get(target.removeprefix("./").lstrip("/"))
                if source is not None:
                    tree[name] = FileEntry(normalise_mode(member.mode), source.data, source.link)
                    total += len(source.data)
            elif member.isfile():
                total += member.size
                if max_bytes is not None and total > max_bytes:
                    raise TreeTooLarge(f"more than {max_bytes} bytes of files")
                extracted = tar.extractfile(member)
                tree[name] = FileEntry(normalise_mode(member.mode), extracted.read() if extracted else b"")
            if max_bytes is not None and total > max_bytes:
                raise TreeTooLarge(f"more than {max_bytes} bytes of files")
    _refuse(refused)
    return tree


def folders_above(trees: dict[str, tuple[Tree, str]]) -> list[str]:
    """The absolute folders above those `harness_tar` writes trees into, outermost first."""
    out: list[str] = []
    for at in trees:
        parts = at.strip("/").split("/")
        out += ["/" + "/".join(parts[:depth]) for depth in range(1, len(parts))]
    return list(dict.fromkeys(out))


#: The owners of `Sandbox.put_harness_tree` whose trees are root's (the others' are the agent user's).
ROOT_OWNERS = ("root", "scratch", "private", "project")
#: Files of a "project" copy that stay root's whatever they hold: code Python imports or runs.
_CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyd", ".so", ".pth")


class ProjectCopy(str):
    """The owner "project" of a graded test run's copy of the tree: its folders root's and sticky, as a
    "scratch" copy's, and its data files the agent user's, so a suite may change its own fixtures as it
    does upstream (jinja's loader test sets a template's mtime). Root's and read-only stay `kept` (the
    files the harness staged: held-out tests, canaries) and every file that is code (`is_code`): no
    process of the run can rewrite what the guard trusts or what grades it before it is imported."""

    kept: frozenset[str]

    def __new__(cls, kept: Iterable[str] = ()) -> ProjectCopy:
        made = super().__new__(cls, "project")
        made.kept = frozenset(kept)
        return made

    def root_keeps(self, path: str, entry: FileEntry) -> bool:
        return path in self.kept or is_code(path, entry)


def is_code(path: str, entry: FileEntry) -> bool:
    """Whether a file is code Python imports or runs (a module, an extension, a .pth) or an executable."""
    return path.endswith(_CODE_SUFFIXES) or bool(entry.link) or bool(entry.mode & 0o111)


def harness_tar(trees: dict[str, tuple[Tree, str]], agent_uid: int) -> bytes:
    """One archive, unpacked at "/", holding each tree in its absolute folder: the folders
    above root-owned, the folder and its tree owned as asked (root or the agent user), every
    entry with FROZEN_ATIME."""
    buffer = io.BytesIO()
    made: set[str] = set()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for at, (tree, owner) in trees.items():
            name = at.strip("/")
            parts = name.split("/")
            for depth in range(1, len(parts)):
                above = "/".join(parts[:depth])
                if above not in made:
                    made.add(above)
                    add_folder(tar, above, frozen=True)
            uid = 0 if owner in ROOT_OWNERS else agent_uid
            keeps = owner.root_keeps if isinstance(owner, ProjectCopy) else None
            # A scratch tree's folders take new files from anyone, who may not touch root's (sticky).
            add_tree(tar, tree, prefix=name + "/", uid=uid, gid=uid, root_dir=name,
                     folder_mode={"scratch": 0o1777, "project": 0o1777, "private": 0o700}.get(owner, 0o755),
                     frozen=True, file_uid=None if keeps is None
                     else lambda path, entry: 0 if keeps(path, entry) else agent_uid)
    return buffer.getvalue()
