"""The end state's diff against the fixture, as the viewer shows it."""

from __future__ import annotations

from endstate.run._enddiff import end_state_diff
from endstate.sandbox._sealed import SealedSandbox
from endstate.sandbox._tree import FileEntry


def _sealed(fixture: dict[str, bytes | tuple[bytes, int]], end: dict[str, bytes | tuple[bytes, int]]) -> SealedSandbox:
    def tree(files):
        return {p: FileEntry(mode=v[1], data=v[0]) if isinstance(v, tuple) else FileEntry(mode=0o644, data=v)
                for p, v in files.items()}

    return SealedSandbox(box=None, snapshot=tree(end), fixture=tree(fixture))


def test_changed_added_removed_binary_and_mode() -> None:
    fixture = {"a.py": b"x = 1\ny = 2\n", "gone.txt": b"bye\n", "blob.bin": b"\x00\x01", "run.sh": (b"echo\n", 0o644),
               "same.py": b"kept\n"}
    end = {"a.py": b"x = 1\ny = 3\n", "new.py": b"z = 0", "blob.bin": b"\x00\x02", "run.sh": (b"echo\n", 0o755),
           "same.py": b"kept\n"}
    text = end_state_diff(_sealed(fixture, end))
    assert "--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n" in text
    assert "Binary file blob.bin differs\n" in text
    assert "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" in text
    assert "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+z = 0\n\\ No newline at end of file\n" in text
    assert "mode of run.sh changed (now 755)\n" in text
    assert "same.py" not in text


def test_unchanged_end_state_is_empty_and_long_diffs_are_cut() -> None:
    assert end_state_diff(_sealed({"a": b"1\n"}, {"a": b"1\n"})) == ""
    text = end_state_diff(_sealed({}, {"big.txt": b"line\n" * 1000}), limit=100)
    assert text.startswith("--- /dev/null") and "diff cut at 100 characters" in text
