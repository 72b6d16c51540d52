"""The end state against the fixture, as a unified diff a reader can review.

Written beside the results (`diffs/<task>.diff`) so a report can show what an agent
changed without the sandbox: text files as unified diffs, binary files and mode
changes as one line each. Capped, since an agent can write anything.
"""

from __future__ import annotations

import difflib

from endstate.sandbox import SealedSandbox

__all__ = ["end_state_diff"]

#: Characters kept per diff; past this the text ends with a line saying how much was cut.
LIMIT = 200_000


def _text(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def end_state_diff(sealed: SealedSandbox, *, limit: int = LIMIT) -> str:
    parts: list[str] = []
    for path in sealed.changed_paths():
        if sealed.is_link(path):
            parts.append(f"symlink {path} -> {sealed.link_target(path)}\n")
            continue
        before = sealed.fixture_bytes(path) if sealed.fixture_exists(path) else None
        after = sealed.read_bytes(path) if sealed.exists(path) else None
        old, new = _text(before), _text(after)
        if old is None or new is None:
            parts.append(f"Binary file {path} differs\n")
            continue
        if old == new:
            parts.append(f"mode of {path} changed (now {sealed.mode(path):o})\n")
            continue
        lines = difflib.unified_diff(old, new, "/dev/null" if before is None else f"a/{path}",
                                     "/dev/null" if after is None else f"b/{path}")
        parts.append("".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                             for line in lines))
    text = "".join(parts)
    if len(text) > limit:
        text = text[:limit] + f"\n... diff cut at {limit} characters ({len(text) - limit} more)\n"
    return text
