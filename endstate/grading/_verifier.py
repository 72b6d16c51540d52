"""`verifier`: a shell verifier (a Harbor task's tests/test.sh) run by the harness in the
grading container, its reward read from a folder the harness made just before it started.

    [[graders]]
    name = "endstate.grading:verifier"
    args = { script = ".verifier/test.sh" }      # a file under the task's holdout/

The script must be held out: staged after sealing, so the agent never saw it, and staged
over the end state, so an edited copy in the workspace is never the one run. The grading
container is fresh, so a reward the agent wrote in its own container never reaches it;
`/logs/verifier` is made there by the harness, empty and the test user's, right before the
script runs, and one that already holds files is a FAIL. The verdict wants both the
script's exit status 0 and a reward of 1: the script may run the end state's code, which
could write a reward and then stop the script before it writes its own.
"""

from __future__ import annotations

import contextlib
import json
import math
import posixpath
import re
import shlex
import time

from endstate.errors import FolderTooLarge, SandboxError, WorkspaceFull
from endstate.grading._state import Grading
from endstate.grading._testrun import REPORT_DIR, footprint
from endstate.grading._verdict import Verdict
from endstate.sandbox import WORKDIR, Sandbox, SealedSandbox, bound_end_state, release_end_state, start_sealed

__all__ = ["REWARD_DIR", "verifier"]

#: Where a Harbor verifier writes `reward.txt`.
REWARD_DIR = "/logs/verifier"
#: The verifier's TMPDIR (the container's /tmp is mounted noexec).
TMP_DIR = "/opt/endstate/verifier-tmp"
#: What the harness reads of that folder; a reward is a number.
_MAX_BYTES = 64 * 1024
#: How long the restarted services get, from their start, before the verifier starts (up long before it in
#: Harbor; a supervisor holds a program STARTING for a second or more).
_SETTLE_S = 5.0
_MIB = 1024 * 1024
#: A variable's name, as the shell takes it in an assignment.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def verifier(sandbox: SealedSandbox, script: str, timeout: float | None = None, tools: str | None = None,
             env: dict[str, str] | None = None) -> Verdict:
    """`bash SCRIPT` in the grading container passes: exit status 0 and `reward.txt` holding 1.

    `tools`, an absolute folder of the task's image, comes first on the script's PATH (an
    imported Harbor task's apt shims, which answer its install lines offline); `env` is set in the
    script's environment (a Harbor task's `[verifier] env`)."""
    grading = Grading.of(sandbox)
    given = env or {}
    bad = [name for name, value in given.items() if not _NAME.fullmatch(name) or name == "TMPDIR"
           or not isinstance(value, str)]
    if bad:
        return Verdict.error(f"verifier env {bad[0]!r}: give variables by their names (letters, digits, _; not TMPDIR, "
                             "which the harness sets) and string values")
    if script not in grading.staged:
        return Verdict.error(f"verifier {script} is not a held-out file: put it under the task's holdout/ "
                             "(a script of the end state is never what grades it)")
    if tools is not None and (not tools.startswith("/") or tools.startswith("/workspace")):
        return Verdict.error(f"verifier tools {tools!r}: give an absolute folder of the task's image, "
                             "outside /workspace (the end state must not put commands there)")
    box = grading.box
    try:
        before = _reward_folder(grading)
    except FolderTooLarge:
        return Verdict.tampered(f"{REWARD_DIR} held more than {_MAX_BYTES} bytes before the verifier ran")
    if before:
        return Verdict.tampered(f"{REWARD_DIR} held {', '.join(sorted(before))} before the verifier ran "
                            "(written by an earlier process of the end state)")
    # A Harbor verifier builds and runs things where it stands (`make`, a test binary), as
    # root in Harbor's own container. Here it gets the graded tree again with its folders
    # open to new files (the end state's files stay root's and read-only, as in a test run's
    # scratch copy) and a TMPDIR of its own on a filesystem that lets it run what it built.
    # The held-out files come last, each top folder of theirs a file system of its own mounted once
    # the services run: nothing of the end state is beside them, and no service ever sees them.
    staged = _staged_folders(grading)
    trees = {REWARD_DIR: ({}, "agent"), TMP_DIR: ({}, "agent")}
    if grading.graded:  # empty when graded in the agent's own sandbox (the fresh-grading-container guard off)
        trees[WORKDIR] = ({p: e for p, e in grading.graded.items() if _top(p) not in staged}, "scratch")
    # Every place the script may write is bounded, and dropped once the reward is read.
    bounds = _bounds(grading) if grading.graded else {}
    held = box.bound_folders(bounds)
    root = bool(grading.graded) and box.limits.agent_uid == 0 and grading.guards.bounded_writes
    unstarted: list[str] = []
    released = interfered = False
    try:
        if staged:  # made now, empty, root's: hidden from the services (first: the tree's own mode is the last word)
            box.put_harness_trees({f"{WORKDIR}/{top}": ({}, "root") for top in staged})
        box.put_harness_trees(trees)
        # All it writes to the container's own filesystem, by its verifier or its services, bounded (root).
        if grading.processes:  # the services the agent left running, sealed: up again, walled off the reward
            began = time.monotonic()
            hidden = [f"{WORKDIR}/{top}" for top in staged] if grading.guards.services_wall else None
            unstarted = start_sealed(box, grading.processes, hidden, bound=root)  # once each one's exec happened
            time.sleep(max(0.0, _SETTLE_S - (time.monotonic() - began)))
        elif root:
            bound_end_state(box)
        if staged:
            _stage(grading, staged, bounds)
        if grading.processes:
            changed = _changed_files(grading, script)
            if changed:
                return Verdict.tampered(f"verifier {script}: its files changed before it ran: "
                                        f"{', '.join(changed[:5])}")
        path = f"PATH={shlex.quote(tools)}:$PATH " if tools else ""
        own = "".join(f"{name}={shlex.quote(value)} " for name, value in sorted(given.items()))
        ran = sandbox.run(f"{own}{path}TMPDIR={TMP_DIR} bash {shlex.quote(script)}", timeout=timeout)
        written = _reward_folder(grading)
        # The services still run: a wedge here is theirs too.
        released = _release(box, root, list(bounds) if held else [])
    except FolderTooLarge:
        return Verdict.fail(f"{REWARD_DIR} holds more than {_MAX_BYTES} bytes after the verifier")
    except WorkspaceFull as exc:  # the script runs the end state in the workspace's copy
        return Verdict.fail(f"verifier {script}: {exc}")
    except SandboxError as exc:
        # A root end state's code runs as root beside the harness: its services, and what the verifier runs of it
        # (a `pgrep` it put on the PATH) even where it left none running.
        if not (grading.processes or box.limits.agent_uid == 0) or not grading.guards.services_freeze:
            raise
        from endstate.sandbox import services_interfered  # loads docker: only on this path

        # Whatever they can do to the harness (stop or kill its runner, wedge its command, fill the disk) is
        # theirs, seen with them frozen; never tried again.
        seen = services_interfered(box, exc)
        if seen is None:
            raise
        interfered = True
        who = "the end state's services" if grading.processes else "the end state, run as root by the verifier,"
        return Verdict.tampered(f"verifier {script}: {who} interfered with the harness running it: {seen}")
    finally:
        # The verdict is decided already, or an error is on its way; a container the services wedged is left
        # as it is (they would wedge this too), and goes with the task.
        if not released and not interfered:
            with contextlib.suppress(SandboxError):
                _release(box, root, list(bounds) if held else [])
    said = (ran.stdout + ran.stderr).strip()[-300:]
    # The end state's own: a service it left that cannot run again is named, whatever the verdict.
    note = f" [not started again: {'; '.join(unstarted)}]" if unstarted else ""
    said = note.lstrip() + " " + said if note else said
    if ran.timed_out:
        return Verdict.fail(f"verifier {script} timed out: {said}")
    reward, values = _reward(written)
    if ran.exit_code != 0:
        return Verdict.fail(f"verifier {script} exited {ran.exit_code} (reward {reward!r}): {said}")
    if reward is None:
        return Verdict.fail(f"verifier {script} exited without writing {REWARD_DIR}/reward.txt or reward.json "
                            f"(Harbor's `harbor init` template writes neither: its test.sh must write one): {said}")
    if values is None:
        return Verdict.fail(f"verifier {script} wrote reward {reward[:40]!r}, not a number")
    if any(value != 1.0 for value in values):
        return Verdict.fail(f"verifier {script}: reward {reward}: {said}")
    return Verdict.ok(f"verifier {script}: exit 0, reward {reward}{note}")


def _reward(written: dict) -> tuple[str | None, list[float] | None]:
    """The reward the verifier wrote, as said and as numbers (None: one is not a finite number):
    reward.txt's text, else reward.json's `reward`, or every reward it names where it names several and
    none `reward` (Harbor reads either file, reward.json an object of numbers, one for each thing a
    verifier measures: each must be 1 to pass)."""
    entry = written.get("reward.txt")
    if entry is not None and not entry.is_link:
        text = entry.data.decode("utf-8", errors="replace").strip()
        return text, _numbers([text], text=True)
    entry = written.get("reward.json")
    if entry is None or entry.is_link:
        return None, None
    try:
        value = json.loads(entry.data)
    except (ValueError, RecursionError):  # nested past the parser's depth: written to break it, no number
        return entry.data.decode("utf-8", errors="replace").strip()[:40], None
    if isinstance(value, dict) and "reward" not in value and value:
        said = ", ".join(f"{name}={json.dumps(got)}" for name, got in sorted(value.items()))
        return said[:200], _numbers([got for _, got in sorted(value.items())])
    got = value.get("reward") if isinstance(value, dict) else value
    return str(got)[:40], _numbers([got])


def _numbers(given: list, text: bool = False) -> list[float] | None:
    """`given` as finite numbers, or None: JSON's numbers (Harbor refuses a string there), or a
    reward.txt's `text` read as one."""
    values = []
    for item in given:
        if isinstance(item, bool) or not isinstance(item, str if text else (int, float)):
            return None
        try:
            value = float(item)
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
        values.append(value)
    return values


def _bounds(grading: Grading) -> dict[str, int]:
    """Where the script may write, each a file system of its own: the graded tree's copy (as much
    room again as the agent's workspace had), its TMPDIR (as large as /tmp), the reward folder
    (filled, it reads as too large), and the test runs' report folder, which it may not write."""
    limits = grading.box.limits
    return {WORKDIR: footprint(grading.graded) + limits.workspace_mb * _MIB, TMP_DIR: limits.tmp_mb * _MIB,
            REWARD_DIR: _MIB, REPORT_DIR: 0}


def _release(box: Sandbox, root: bool, folders: list[str]) -> bool:
    """What `verifier` bounded, undone (`root`: the container's own filesystem; `folders`: those
    bound_folders mounted); True."""
    if root:
        release_end_state(box)
    if folders:
        box.release_folders(folders)
    return True


def _top(path: str) -> str:
    return path.split("/", 1)[0]


def _staged_folders(grading: Grading) -> dict[str, dict]:
    """Top folder -> the held-out files below it (paths from it), for each top folder of the graded tree
    that holds held-out files and is no folder of the fixture's (`.harbor`): the verifier's own."""
    if not grading.graded or not grading.guards.staged_apart:
        return {}
    fixture = {_top(p) for p in grading.sealed.fixture_paths()}
    folders: dict[str, dict] = {}
    for path in sorted(grading.staged):
        if "/" in path and _top(path) not in fixture and path in grading.graded:
            folders.setdefault(_top(path), {})[path.split("/", 1)[1]] = grading.graded[path]
    return folders


def _stage(grading: Grading, staged: dict[str, dict], bounds: dict[str, int]) -> None:
    """The held-out files, each top folder of theirs on a bounded folder mounted now (after the services'
    mount namespaces were made: a mount made since never reaches them), bounded like the rest."""
    limits = grading.box.limits
    more = {f"{WORKDIR}/{top}": footprint(files) + limits.workspace_mb * _MIB for top, files in staged.items()}
    grading.box.bound_folders(more)
    bounds.update(more)
    # Into the graded tree's own folder, as it was put (a tree put at a folder below it would make that root's).
    grading.box.put_harness_trees({WORKDIR: ({f"{top}/{path}": entry for top, files in staged.items()
                                              for path, entry in files.items()}, "scratch")})


def _changed_files(grading: Grading, script: str) -> list[str]:
    """The verifier's files (its script's folder, as staged) whose bytes in the grading container are not
    the staged ones, or that were added there: read back with the services running, before it runs."""
    folder = posixpath.dirname(script)
    staged = {p[len(folder) + 1:]: e for p, e in grading.graded.items()
              if p in grading.staged and folder and p.startswith(folder + "/")}
    if not staged:
        return []
    try:
        seen = grading.box.read_folder(posixpath.join(WORKDIR, folder),
                                       max_bytes=sum(len(e.data) for e in staged.values()) + _MAX_BYTES)
    except (FolderTooLarge, FileNotFoundError):
        return [folder]
    return sorted(name for name in set(staged) | set(seen)
                  if name not in staged or name not in seen or (seen[name].data, seen[name].link)
                  != (staged[name].data, staged[name].link))


def _reward_folder(grading: Grading) -> dict:
    try:
        return grading.box.read_folder(REWARD_DIR, max_bytes=_MAX_BYTES)
    except FileNotFoundError:
        return {}
