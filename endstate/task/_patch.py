"""Unified diffs over file trees: an overlay written as a patch, and applied strictly.

A task's `solution.diff` and a hack's `overlay.diff` say what changes as a unified
diff (git's form: `diff --git`, `---`/`+++`, `@@` hunks, `new file mode`,
`deleted file mode`, `old mode`/`new mode`, `\\ No newline at end of file`) instead
of carrying whole copies of the files they touch.

Applying is strict: every hunk must match the file at the line the hunk states,
context and removed lines byte for byte, with no offset and no fuzz. A diff that
does not apply is a `PatchError` naming the file and the hunk; a hack that applied
only in part must never be graded as caught. Renames are applied; copies and
binary patches are refused by name. Everything is bytes: lines end at b"\\n" only,
so a file with CRLF or Latin-1 text comes through unchanged.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from endstate.errors import UserError
from endstate.sandbox import FileEntry, Tree

__all__ = ["PatchError", "apply_patch", "make_patch", "patch_paths", "write_overlay_diff"]

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = b"\\ No newline at end of file"
_CONTEXT = 3


class PatchError(UserError):
    """A unified diff that does not parse, or does not apply to the tree it is laid over."""


class _Hunk:
    def __init__(self, old_start: int, header: bytes):
        self.old_start = old_start
        self.header = header
        self.old: list[bytes] = []
        self.new: list[bytes] = []


class _FilePatch:
    def __init__(self, old_path: str | None, new_path: str | None):
        self.old_path = old_path
        self.new_path = new_path
        self.new_mode: int | None = None
        self.hunks: list[_Hunk] = []

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


def _lines(data: bytes) -> list[bytes]:
    """`data` split after each b"\\n" (the last line may lack one)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _strip_prefix(raw: bytes, side: bytes) -> str | None:
    """The path of a `---`/`+++` line: None for /dev/null; `a/` or `b/` and any timestamp removed."""
    text = raw.rstrip(b"\r\n").split(b"\t", 1)[0].decode("utf-8", errors="surrogateescape")
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    if text == "/dev/null":
        return None
    for prefix in (side.decode() + "/",):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text


def _git_paths(line: bytes) -> tuple[str, str]:
    rest = line[len(b"diff --git "):].rstrip(b"\r\n").decode("utf-8", errors="surrogateescape")
    if rest.startswith("a/") and " b/" in rest:
        old, new = rest[2:].split(" b/", 1)
        return old, new
    raise PatchError(f"cannot read the paths of `{line.decode(errors='replace').strip()}`")


def _parse(patch: bytes) -> list[_FilePatch]:
    lines = _lines(patch)
    files: list[_FilePatch] = []
    current: _FilePatch | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith(b"diff --git "):
            old, new = _git_paths(line)
            current = _FilePatch(old, new)
            files.append(current)
        elif line.startswith((b"rename from ", b"rename to ")) and current is not None:
            named = line.rstrip(b"\r\n").split(b" ", 2)[2].decode("utf-8", errors="surrogateescape")
            if line.startswith(b"rename from "):
                current.old_path = named
            else:
                current.new_path = named
        elif line.startswith((b"copy from", b"copy to")):
            raise PatchError(f"{current.path if current else 'a file'}: copies are not supported: "
                             "write the copy as an added file")
        elif line.startswith((b"GIT binary patch", b"Binary files ")):
            raise PatchError(f"{current.path if current else 'a file'}: binary patches are not supported: "
                             "put the file whole under files/ (or solution/)")
        elif line.startswith((b"new file mode ", b"new mode ")) and current is not None:
            current.new_mode = 0o755 if int(line.split()[-1], 8) & 0o111 else 0o644
            if line.startswith(b"new file mode "):
                current.old_path = None
        elif line.startswith(b"deleted file mode ") and current is not None:
            current.new_path = None
        elif line.startswith(b"--- ") and index + 1 < len(lines) and lines[index + 1].startswith(b"+++ "):
            old, new = _strip_prefix(line[4:], b"a"), _strip_prefix(lines[index + 1][4:], b"b")
            if current is None or current.hunks:
                current = _FilePatch(old, new)
                files.append(current)
            else:
                current.old_path, current.new_path = old, new
            index += 1
        elif line.startswith(b"@@"):
            if current is None:
                raise PatchError(f"a hunk (`{line.decode(errors='replace').strip()}`) comes before any file header")
            index = _read_hunk(lines, index, current)
            continue
        index += 1
    return files


def _read_hunk(lines: list[bytes], index: int, target: _FilePatch) -> int:
    header = lines[index].rstrip(b"\r\n")
    match = _HUNK.match(header)
    if not match:
        raise PatchError(f"{target.path}: malformed hunk header `{header.decode(errors='replace')}`")
    old_start, old_count = int(match[1]), int(match[2] if match[2] is not None else 1)
    new_count = int(match[4] if match[4] is not None else 1)
    # An empty old side (`-N,0`) inserts after line N.
    hunk = _Hunk(old_start if old_count == 0 else old_start - 1, header)
    index += 1
    old_left, new_left = old_count, new_count
    last: list[list[bytes]] = []
    while index < len(lines) and (old_left > 0 or new_left > 0 or lines[index].startswith(_NO_NEWLINE)):
        line = lines[index]
        if line.startswith(_NO_NEWLINE):
            for side in last:
                side[-1] = side[-1][:-1] if side[-1].endswith(b"\n") else side[-1]
            last = []
        else:
            tag, text = line[:1], line[1:]
            if line in (b"\n", b"\r\n"):  # an empty context line whose leading space was trimmed
                tag, text = b" ", line
            if tag == b" ":
                hunk.old.append(text)
                hunk.new.append(text)
                old_left, new_left, last = old_left - 1, new_left - 1, [hunk.old, hunk.new]
            elif tag == b"-":
                hunk.old.append(text)
                old_left, last = old_left - 1, [hunk.old]
            elif tag == b"+":
                hunk.new.append(text)
                new_left, last = new_left - 1, [hunk.new]
            else:
                break
        index += 1
    if old_left or new_left:
        raise PatchError(f"{target.path}: hunk `{header.decode(errors='replace')}` is cut short "
                         f"({old_left} old and {new_left} new line(s) missing)")
    target.hunks.append(hunk)
    return index


def _apply_hunks(path: str, data: bytes, hunks: list[_Hunk]) -> bytes:
    lines = _lines(data)
    out: list[bytes] = []
    at = 0
    for number, hunk in enumerate(hunks, start=1):
        what = f"hunk {number} (`{hunk.header.decode(errors='replace')}`) of {path}"
        if hunk.old_start < at:
            raise PatchError(f"{what} overlaps the hunk before it")
        found = lines[hunk.old_start:hunk.old_start + len(hunk.old)]
        if found != hunk.old:
            differ = next((i for i, (a, b) in enumerate(zip(found, hunk.old)) if a != b), len(found))
            if differ < len(hunk.old):
                expected = hunk.old[differ].decode(errors="replace").rstrip("\n")
                got = found[differ].decode(errors="replace").rstrip("\n") if differ < len(found) else "<end of file>"
                raise PatchError(f"{what} does not apply: line {hunk.old_start + differ + 1} is {got!r} where "
                                 f"the diff expects {expected!r}")
            raise PatchError(f"{what} does not apply: the file has lines where the diff expects it to end")
        out += lines[at:hunk.old_start] + hunk.new
        at = hunk.old_start + len(hunk.old)
    out += lines[at:]
    return b"".join(out)


def apply_patch(tree: Tree, patch: bytes) -> tuple[Tree, list[str]]:
    """`tree` with the unified diff `patch` applied, and the paths the diff deletes.

    Raises PatchError, naming the file and hunk, when any part of it does not apply.
    """
    files = _parse(patch)
    if not files:
        raise PatchError("the diff changes no file (no `diff --git` or `---`/`+++` header found)")
    result, deleted = dict(tree), []
    for item in files:
        path = item.path
        if item.old_path is None:
            if path in result:
                raise PatchError(f"{path}: the diff creates it, but it already exists")
            before = b""
        else:
            if item.old_path not in result or result[item.old_path].link:
                raise PatchError(f"{item.old_path}: the diff changes it, but there is no such file")
            before = result[item.old_path].data
        after = _apply_hunks(path, before, item.hunks)
        if item.new_path is None:
            if after:
                raise PatchError(f"{item.old_path}: the diff deletes it, but does not remove all of its lines")
            result.pop(item.old_path)
            deleted.append(item.old_path)
            continue
        mode = item.new_mode if item.new_mode is not None else (
            result[item.old_path].mode if item.old_path in result else 0o644)
        if item.old_path is not None and item.old_path != path:  # a rename
            result.pop(item.old_path)
            deleted.append(item.old_path)
        result[path] = FileEntry(mode, after)
    return result, deleted


def patch_paths(patch: bytes) -> list[str]:
    """The paths a unified diff touches (old and new), sorted; PatchError when it does not parse."""
    return sorted({p for f in _parse(patch) for p in (f.old_path, f.new_path) if p})


def _side(lines: list[bytes], start: int, stop: int, tag: bytes) -> list[bytes]:
    out = []
    for line in lines[start:stop]:
        out.append(tag + line if line.endswith(b"\n") else tag + line + b"\n" + _NO_NEWLINE + b"\n")
    return out


def _range(start: int, count: int) -> str:
    # Unified diff: an empty range names the line before it.
    return f"{start if count else start - 1},{count}" if count != 1 else f"{start}"


def make_patch(before: Tree, after: Tree) -> bytes:
    """A unified diff (git's form, three lines of context) that turns `before` into `after`.

    Only regular files are compared; paths are in sorted order, so the same trees
    always give the same bytes.
    """
    out: list[bytes] = []
    for path in sorted(p for p in set(before) | set(after)
                       if not (before.get(p) and before[p].link) and not (after.get(p) and after[p].link)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        name = path.encode("utf-8", errors="surrogateescape")
        out.append(b"diff --git a/" + name + b" b/" + name + b"\n")
        if old is None:
            out.append(f"new file mode 100{new.mode & 0o777:o}\n".encode())
        elif new is None:
            out.append(f"deleted file mode 100{old.mode & 0o777:o}\n".encode())
        elif (old.mode & 0o111 != 0) != (new.mode & 0o111 != 0):
            out.append(f"old mode 100{old.mode & 0o777:o}\nnew mode 100{new.mode & 0o777:o}\n".encode())
        a, b = _lines(old.data if old else b""), _lines(new.data if new else b"")
        if a == b:
            continue
        out.append(b"--- " + (b"a/" + name if old is not None else b"/dev/null") + b"\n")
        out.append(b"+++ " + (b"b/" + name if new is not None else b"/dev/null") + b"\n")
        for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(_CONTEXT):
            i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
            out.append(f"@@ -{_range(i1 + 1, i2 - i1)} +{_range(j1 + 1, j2 - j1)} @@\n".encode())
            for op, a1, a2, b1, b2 in group:
                if op == "equal":
                    out += _side(a, a1, a2, b" ")
                    continue
                out += _side(a, a1, a2, b"-")
                out += _side(b, b1, b2, b"+")
    return b"".join(out)


def write_overlay_diff(folder: Path, base: Tree, files: Tree) -> None:
    """Write the change that laying `files` over `base` makes as `folder/overlay.diff`
    (the form a generated hack takes); nothing is written when they change nothing."""
    patch = make_patch(base, {**base, **files})
    if patch:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / "overlay.diff").write_bytes(patch)
