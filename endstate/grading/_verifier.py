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

import json
import shlex
import time

from endstate.errors import FolderTooLarge, SandboxError, WorkspaceFull
from endstate.grading._testrun import REPORT_DIR, footprint
from endstate.grading._verdict import Verdict
from endstate.sandbox import WORKDIR, SealedSandbox, start_sealed

__all__ = ["REWARD_DIR", "verifier"]

#: Where a Harbor verifier writes `reward.txt`.
REWARD_DIR = "/logs/verifier"
#: The verifier's TMPDIR (the container's /tmp is mounted noexec).
TMP_DIR = "/opt/endstate/verifier-tmp"
#: What the harness reads of that folder; a reward is a number.
_MAX_BYTES = 64 * 1024
#: How long the restarted services get before the verifier starts (up long before it in Harbor; a supervisor
#: holds a program STARTING for a second or more).
_SETTLE_S = 5.0
_MIB = 1024 * 1024


def verifier(sandbox: SealedSandbox, script: str, timeout: float | None = None, tools: str | None = None) -> Verdict:
    """`bash SCRIPT` in the grading container passes: exit status 0 and `reward.txt` holding 1.

    `tools`, an absolute folder of the task's image, comes first on the script's PATH (an
    imported Harbor task's apt shims, which answer its install lines offline)."""
    if script not in sandbox.staged:
        return Verdict.error(f"verifier {script} is not a held-out file: put it under the task's holdout/ "
                             "(a script of the end state is never what grades it)")
    if tools is not None and (not tools.startswith("/") or tools.startswith("/workspace")):
        return Verdict.error(f"verifier tools {tools!r}: give an absolute folder of the task's image, "
                             "outside /workspace (the end state must not put commands there)")
    grading = sandbox.grading
    try:
        before = _reward_folder(sandbox)
    except FolderTooLarge:
        return Verdict.tampered(f"{REWARD_DIR} held more than {_MAX_BYTES} bytes before the verifier ran")
    if before:
        return Verdict.tampered(f"{REWARD_DIR} held {', '.join(sorted(before))} before the verifier ran "
                            "(written by an earlier process of the end state)")
    # A Harbor verifier builds and runs things where it stands (`make`, a test binary), as
    # root in Harbor's own container. Here it gets the graded tree again with its folders
    # open to new files (the end state's files stay root's and read-only, as in a test run's
    # scratch copy) and a TMPDIR of its own on a filesystem that lets it run what it built.
    trees = {REWARD_DIR: ({}, "agent"), TMP_DIR: ({}, "agent")}
    if sandbox.graded:  # empty when graded in the agent's own sandbox (the fresh-container guard off)
        trees[WORKDIR] = (sandbox.graded, "scratch")
    # Every place the script may write is bounded, and dropped once the reward is read.
    bounds = _bounds(sandbox) if sandbox.graded else {}
    held = grading.bound_folders(bounds)
    try:
        grading.put_harness_trees(trees)
        if sandbox.processes:  # the services the agent left running, sealed: up again, walled off the reward
            start_sealed(grading, sandbox.processes)
            time.sleep(_SETTLE_S)
        path = f"PATH={shlex.quote(tools)}:$PATH " if tools else ""
        ran = sandbox.run(f"{path}TMPDIR={TMP_DIR} bash {shlex.quote(script)}", timeout=timeout)
        written = _reward_folder(sandbox)
    except FolderTooLarge:
        return Verdict.fail(f"{REWARD_DIR} holds more than {_MAX_BYTES} bytes after the verifier")
    except WorkspaceFull as exc:  # the script runs the end state in the workspace's copy
        return Verdict.fail(f"verifier {script}: {exc}")
    except SandboxError as exc:
        from endstate.sandbox import machinery_fault  # loads docker: only on this path

        if not sandbox.processes or machinery_fault(exc):
            raise
        # The end state's services run as root beside the harness: one that kills what runs the verifier fails.
        return Verdict.fail(f"verifier {script}: the harness running it died while the end state's services ran: {exc}")
    finally:
        if held:
            grading.release_folders(list(bounds))
    said = (ran.stdout + ran.stderr).strip()[-300:]
    if ran.timed_out:
        return Verdict.fail(f"verifier {script} timed out: {said}")
    reward = _reward(written)
    if ran.exit_code != 0:
        return Verdict.fail(f"verifier {script} exited {ran.exit_code} (reward {reward!r}): {said}")
    if reward is None:
        return Verdict.fail(f"verifier {script} exited without writing {REWARD_DIR}/reward.txt or reward.json "
                            f"(Harbor's `harbor init` template writes neither: its test.sh must write one): {said}")
    try:
        value = float(reward)
    except ValueError:
        return Verdict.fail(f"verifier {script} wrote reward {reward[:40]!r}, not a number")
    if value != 1.0:
        return Verdict.fail(f"verifier {script}: reward {reward}: {said}")
    return Verdict.ok(f"verifier {script}: exit 0, reward {reward}")


def _reward(written: dict) -> str | None:
    """The reward the verifier wrote: reward.txt's text, else reward.json's `reward` (Harbor writes either)."""
    entry = written.get("reward.txt")
    if entry is not None and not entry.is_link:
        return entry.data.decode("utf-8", errors="replace").strip()
    entry = written.get("reward.json")
    if entry is None or entry.is_link:
        return None
    try:
        value = json.loads(entry.data)
    except ValueError:
        return entry.data.decode("utf-8", errors="replace").strip()[:40]
    return str(value.get("reward")) if isinstance(value, dict) and "reward" in value else str(value)[:40]


def _bounds(sandbox: SealedSandbox) -> dict[str, int]:
    """Where the script may write, each a file system of its own: the graded tree's copy (as much
    room again as the agent's workspace had), its TMPDIR (as large as /tmp), the reward folder
    (filled, it reads as too large), and the test runs' report folder, which it may not write."""
    limits = sandbox.grading.limits
    return {WORKDIR: footprint(sandbox.graded) + limits.workspace_mb * _MIB, TMP_DIR: limits.tmp_mb * _MIB,
            REWARD_DIR: _MIB, REPORT_DIR: 0}


def _reward_folder(sandbox: SealedSandbox) -> dict:
    try:
        return sandbox.grading.read_folder(REWARD_DIR, max_bytes=_MAX_BYTES)
    except FileNotFoundError:
        return {}
