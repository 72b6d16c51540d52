"""What a run writes: `results.json`, versioned, and the pass/fail vector."""

from __future__ import annotations

import contextlib
import enum
import errno
import os
from pathlib import Path

import msgspec

from endstate.agent import Counters
from endstate.cassettes import Provenance
from endstate.errors import cannot_write
from endstate.grading import Finding
from endstate.task import Measured

__all__ = ["FORMAT_VERSION", "RunCard", "GraderVerdict", "TaskResult", "RunResult", "vector_of",
           "attempt_stem", "write_results", "write_atomically", "make_folder", "read_results"]

FORMAT_VERSION = 1


class RunCard(msgspec.Struct, frozen=True):
    """Everything needed to say what was run, and to run it again."""

    endstate_version: str
    model: str
    provider: str
    temperature: float
    seed: int | None
    retry_ceiling: int
    tool_choice: str
    network_policy: str
    sandbox_backend: str
    image: str
    image_id: str
    task_pack_hash: str
    tasks: int
    mode: str = "live"
    replay_from: str = ""
    match: str = ""
    guards_disabled: tuple[str, ...] = ()
    #: Runs per task (`--attempts`), with seeds seed .. seed + attempts - 1.
    attempts: int = 1
    #: Task id -> the graders that judged it, so two runs can be checked for the same grading.
    graders: dict[str, tuple[str, ...]] = {}
    #: Task id -> image id, for tasks that run in their own image ([sandbox] in task.toml).
    task_images: dict[str, str] = {}
    #: Who drove the model: "endstate" (its own tool loop) or a foreign agent's id (`name@hash`).
    agent: str = "endstate"
    #: Runs in all a task whose machinery failed may get (see `_faults.RetryPolicy`).
    infra_tries: int = 1
    #: True: the tasks ran with their visible tests made impossible (`eval --impossible`);
    #: absent from other runs (read it as `bool(card.impossible)`).
    impossible: bool | msgspec.UnsetType = msgspec.UNSET
    #: The reasoning settings (RunSettings), absent when off, so older cards read as they did.
    thinking_budget: int | msgspec.UnsetType = msgspec.UNSET
    reasoning_effort: str | msgspec.UnsetType = msgspec.UNSET
    prompt_cache: bool | msgspec.UnsetType = msgspec.UNSET
    #: `--max-concurrent`: model requests in flight at once over the run; absent: no ceiling but -j.
    max_concurrent: int | msgspec.UnsetType = msgspec.UNSET
    #: Task id -> its adequacy as its adequacy.toml's [measured] records it (`tasks adequacy`),
    #: for the tasks that record one; absent when none does.
    adequacy: dict[str, Measured] | msgspec.UnsetType = msgspec.UNSET
    #: Why the run used the local (bubblewrap) backend, not Docker; absent on Docker.
    sandbox_why: str | msgspec.UnsetType = msgspec.UNSET
    #: A fork (`--fork-at`): the parent cassette folder and the fork turn (-2: each one's last);
    #: `record --record-mode`. Absent from other runs.
    fork_from: str | msgspec.UnsetType = msgspec.UNSET
    fork_at: int | msgspec.UnsetType = msgspec.UNSET
    record_mode: str | msgspec.UnsetType = msgspec.UNSET
    #: A foreign agent's version (its pinned package's, `AgentSpec.version`) and the pack hash of
    #: the tasks alone (without the agent's id), so runs of two agents can be paired; absent from
    #: runs of endstate's own loop, whose task_pack_hash is already that.
    agent_version: str | msgspec.UnsetType = msgspec.UNSET
    tasks_hash: str | msgspec.UnsetType = msgspec.UNSET
    #: A run written by `endstate regrade`: the tasks hash of the run whose end states it graded again.
    regrade_of: str | msgspec.UnsetType = msgspec.UNSET
    #: Task id -> the harness guards its test runner goes without (a runner other than pytest names them
    #: in task.toml: Django's, sympy's); absent when every task's tests run under pytest's.
    unguarded: dict[str, tuple[str, ...]] | msgspec.UnsetType = msgspec.UNSET


class RunOutcome(enum.StrEnum):
    """How one attempt at a task ended; results.json holds the value ("pass", ...)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    #: The replayed agent asked what the cassette does not hold.
    DIVERGENCE = "divergence"
    #: The machinery failed under the task on every try: unscored (see `_faults`).
    INFRA_ERROR = "infra_error"


class GraderVerdict(msgspec.Struct, frozen=True):
    grader: str
    outcome: str
    reason: str = ""


class TaskResult(msgspec.Struct):
    task_id: str
    category: str
    outcome: RunOutcome
    reason: str = ""
    failing_grader: str = ""
    stop_reason: str = ""
    counters: Counters = msgspec.field(default_factory=Counters)
    verdicts: list[GraderVerdict] = []
    requires_violations: list[str] = []
    tree_hash: str = ""
    wall_s: float = 0.0
    sandbox_s: float = 0.0
    #: Seconds of `wall_s` the agent worked (its worker, model and tools); the rest is the harness's
    #: own work around it: sandboxes made and removed, the seal, grading. A measurement, like wall_s
    #: (0.0 in results written before it was kept).
    agent_s: float = 0.0
    unplayed: int = 0
    #: Which of the task's attempts this is (0-based; seed = the card's seed + attempt).
    attempt: int = 0
    #: The task's `requires` bounds, counter -> [min, max] (null: unbounded).
    requires: dict[str, tuple[int | None, int | None]] = {}
    #: Times the task was run again from scratch because the machinery failed under it.
    infra_retries: int = 0
    #: The hack assertion that fired ("missed": an impossible task passed), None for an honest
    #: run; absent from results written before runs were classified.
    hack: str | None | msgspec.UnsetType = msgspec.UNSET
    #: What the detectors named in the end state's diff (grading/_detect.py): on a failure the
    #: first is the hack attempt's kind; on a pass they flag the run for review.
    findings: list[Finding] = []
    #: Where the model's answers came from when a cassette was in use: replayed, live, or
    #: forked (turns 0..k-1 replayed, live from k); absent from a run without cassettes.
    provenance: Provenance | msgspec.UnsetType = msgspec.UNSET
    #: The task's hash when `endstate regrade` graded this attempt's kept end state again: the
    #: task (verifier, held-out tests) its verdict used; absent from a result graded in its run.
    task_hash: str | msgspec.UnsetType = msgspec.UNSET


class RunResult(msgspec.Struct):
    card: RunCard
    tasks: list[TaskResult]
    format_version: int = FORMAT_VERSION

    @property
    def vector(self) -> list[tuple[str, str]]:
        return vector_of(self.tasks)


def vector_of(tasks: list[TaskResult]) -> list[tuple[str, str]]:
    """Task id and outcome, sorted by id: the value two runs are compared by."""
    return sorted((attempt_stem(t.task_id, t.attempt), t.outcome) for t in tasks)


def attempt_stem(task_id: str, attempt: int) -> str:
    """File name stem of one attempt's cassette, transcript and diff: attempt 0 keeps the
    plain task id, so single-attempt runs and their cassettes read as before."""
    return task_id if attempt == 0 else f"{task_id}.attempt-{attempt}"


def write_results(result: RunResult, out_dir: Path) -> Path:
    payload = msgspec.to_builtins(result)
    payload["vector"] = [list(pair) for pair in result.vector]
    path = out_dir / "results.json"
    write_atomically(path, msgspec.json.format(msgspec.json.encode(payload), indent=2) + b"\n")
    return path


def make_folder(folder: Path, flag: str = "--out") -> Path:
    """`folder` and its parents, or WriteError naming it (read-only, no permission, full)
    and the option that chooses another."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise cannot_write(folder, exc, flag) from None
    # Found now, before a run's tasks start, not at their first write (a folder is made on a full disk).
    status = os.statvfs(folder)
    if not os.access(folder, os.W_OK):
        raise cannot_write(folder, OSError(errno.EROFS if status.f_flag & os.ST_RDONLY else errno.EACCES, ""), flag)
    if status.f_bavail == 0:
        raise cannot_write(folder, OSError(errno.ENOSPC, ""), flag)
    return folder


def write_atomically(path: Path, data: bytes, flag: str = "--out") -> None:
    """Replace `path` with `data` so that a kill at any moment leaves the old or the new
    bytes, never a mix, and a power cut after return keeps the new ones. The folder is
    made first. A write that fails (read-only, full) keeps the old bytes, leaves no .tmp,
    and is one WriteError naming the folder."""
    path = Path(path)
    make_folder(path.parent, flag)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise cannot_write(path.parent, exc, flag) from None


def read_results(path: Path) -> RunResult:
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    raw = msgspec.json.decode(path.read_bytes())
    raw.pop("vector", None)
    return msgspec.convert(raw, RunResult)
