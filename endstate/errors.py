"""The exceptions endstate raises, all under one base.

    EndstateError                  anything endstate reports to a user
    ├── UserError                  bad input: exit 2, one line, no traceback
    │   ├── ManifestError          a task.toml that does not decode or validate
    │   ├── PolicyError            a policy file or table that does not decode or validate
    │   ├── FixtureError           a missing fixture, or a symlink escaping it
    │   ├── GraderContractError    a grader whose signature breaks the contract
    │   ├── ModelSpecError         unknown provider, malformed spec, missing key
    │   ├── CassetteError          a cassette that is missing, corrupt or foreign
    │   ├── AgentFileError         an agent file that does not decode, or an agent a task cannot use
    │   └── SandboxUnavailable     the requested backend cannot run here
    ├── SandboxError               the sandbox failed while a task ran
    │   ├── WorkspaceFull          the workspace grew past its size ceiling
    │   └── FolderTooLarge         a folder the harness read held more than its cap
    └── ReplayDivergence           replay met a request with no recorded answer

A user error is raised before the work it concerns starts, so the CLI can print it
and carry on with other tasks. ReplayDivergence is reported apart from pass/fail:
it says the harness or the recording changed, not that the agent failed.
"""

from __future__ import annotations

__all__ = [
    "EndstateError",
    "UserError",
    "ManifestError",
    "PolicyError",
    "FixtureError",
    "GraderContractError",
    "ModelSpecError",
    "CassetteError",
    "AgentFileError",
    "SandboxUnavailable",
    "SandboxError",
    "WorkspaceFull",
    "FolderTooLarge",
    "CommandWedged",
    "ReplayDivergence",
]


class EndstateError(Exception):
    """Base of every error endstate raises on purpose."""


class UserError(EndstateError):
    """Bad input from the user: reported as one line, exit code 2."""

    exit_code = 2


class ManifestError(UserError):
    """A task manifest that does not decode or validate; names file and field."""


class PolicyError(UserError):
    """A policy file or table that does not decode or validate; names source and field."""


class FixtureError(UserError):
    """A task fixture that is missing or unsafe to copy."""


class GraderContractError(UserError):
    """A grader whose signature could let it see more than the end state."""


class ModelSpecError(UserError):
    """A model spec that names no known provider, or lacks what it needs."""


class CassetteError(UserError):
    """A cassette that is missing, corrupt, of another format or for another task."""


class AgentFileError(UserError):
    """An agent file that does not decode or validate (names file and field), an unknown
    agent name, or an agent that cannot be used as asked."""


class SandboxUnavailable(UserError):
    """The sandbox backend asked for cannot run on this machine."""


class SandboxError(EndstateError):
    """The sandbox failed while a task was running (an ERROR outcome, not a FAIL)."""


class CommandWedged(SandboxError):
    """A command outlived its deadline and the sandbox's own watchdog did not end it: the
    harness's runner in the container is stuck, and the container was killed. A fault of the
    machinery (the task is run again, see run/_faults.py), never a verdict on the agent:
    graders do not turn it into an ERROR verdict."""


class FolderTooLarge(SandboxError):
    """A folder the harness reads back (a test run's report folder) held more than the read's
    cap. What is in that folder was written by the process under test: a grader that meets this
    fails the run as tampering; it is never the harness's fault."""


class WorkspaceFull(SandboxError):
    """A command left the workspace larger than its ceiling; the agent's processes were killed.
    The agent loop ends the run on it (stop reason `disk_limit`), and the task fails."""


class ReplayDivergence(EndstateError):
    """Replay met a request with no recorded answer.

    Carries the task, the turn and the request hash, and the closest recorded
    request so the user can see what changed.
    """

    def __init__(self, message: str, *, task: str = "", turn: int | None = None,
                 request_hash: str = "", closest: str = "") -> None:
        super().__init__(message)
        self.task = task
        self.turn = turn
        self.request_hash = request_hash
        self.closest = closest
