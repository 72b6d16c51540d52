"""Continuing a killed run in its own output folder.

A run writes `run.json` before its first task starts: the run card plus the
settings that are not on the card. `--resume` reads it back and refuses to go on
when anything differs (naming the field), keeps every task that has a result in
`results.json`, and reruns the others from scratch: their partial transcript,
work folder (journal, job, logs) and, when recording, partial cassette go first.
A task whose machinery failed (`infra_error`) or that met a harness error did not
finish either: it is rerun too, unless the user asks to keep errors as they are.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from endstate.agent import StopReason
from endstate.errors import UserError
from endstate.run._folder import RunFolder
from endstate.run._results import RunCard, RunOutcome, TaskResult, read_results, write_atomically

__all__ = ["RUN_FILE", "run_key", "digest", "finished", "start_run", "kept_on_resume", "discard_partial", "sweep_tmp"]

RUN_FILE = "run.json"


def run_key(card: RunCard, extra: dict[str, Any]) -> dict[str, Any]:
    """What a resumed run must share with the run it continues, field by field."""
    key = {**msgspec.to_builtins(card), **extra}
    return msgspec.json.decode(msgspec.json.encode(key))  # as it reads back from disk (tuples are lists)


def digest(value: str | bytes | None) -> str:
    """A stand-in for a value that may hold a credential (a base URL): equal iff the values are."""
    if not value:
        return ""
    return hashlib.sha256(value.encode() if isinstance(value, str) else value).hexdigest()[:16]


#: How an agent's run ends when the agent never left an end state of its own (see run/_runner.py).
_NO_END_STATE = ("", StopReason.MODEL_ERROR, StopReason.HARNESS_ERROR, StopReason.INPUT_ERROR, StopReason.INFRA_ERROR)


def finished(result: TaskResult) -> bool:
    """Whether a resumed run keeps this result: not when the machinery failed under the
    task or endstate itself did (a pass, fail, divergence or model error is kept), unless the
    agent had already ended: an attempt whose end state was sealed, or was being sealed, is
    never run again, whatever happened to it after (else a failing end state that breaks
    sealing or grading would buy its agent another try)."""
    if result.tree_hash or result.stop_reason not in _NO_END_STATE:
        return True
    if result.outcome == RunOutcome.INFRA_ERROR:
        return False
    return not (result.outcome == RunOutcome.ERROR and result.reason.startswith(("harness bug:", "harness_error:")))


def start_run(out_dir: Path, key: dict[str, Any], *, resume: bool, rerun_errors: bool = True) -> list[TaskResult]:
    """Begin a run in `out_dir`; returns the results of tasks a resumed run keeps
    (all of them with `rerun_errors` off, else only the `finished` ones).

    Raises UserError when there is nothing to resume or the settings differ."""
    path = out_dir / RUN_FILE
    if not resume:
        if path.is_file() or (out_dir / "results.json").is_file():  # a run replaced: none of its files stay
            RunFolder(out_dir).clear()
        write_atomically(path, msgspec.json.format(msgspec.json.encode(key), indent=2) + b"\n")
        return []
    if not path.is_file():
        raise UserError(f"cannot resume: {out_dir} holds no run ({RUN_FILE} is missing); run without --resume")
    try:
        before = msgspec.json.decode(path.read_bytes(), type=dict[str, Any])
    except msgspec.DecodeError as exc:
        raise UserError(f"cannot resume: {path} is damaged ({exc}); run without --resume into a fresh --out") from None
    differ = [f"{field} was {before.get(field)!r}, now {key.get(field)!r}"
              for field in sorted(set(before) | set(key)) if before.get(field) != key.get(field)]
    if differ:
        raise UserError(f"cannot resume the run in {out_dir}: {'; '.join(differ)}. Resume with the same "
                        "settings and tasks, or start afresh without --resume")
    sweep_tmp(out_dir)
    return kept_on_resume(out_dir, rerun_errors=rerun_errors)


def sweep_tmp(folder: Path) -> list[Path]:
    """Remove the half-written `X.tmp` files a run killed inside `write_atomically` left in
    `folder` (at any depth): the file they were to replace is whole, old or new, beside them."""
    stale = sorted(folder.rglob("*.tmp")) if folder.is_dir() else []
    for path in stale:
        if path.is_file():
            path.unlink(missing_ok=True)
    return stale


def kept_on_resume(out_dir: Path, *, rerun_errors: bool = True) -> list[TaskResult]:
    """The results in `out_dir` that resuming it keeps (all, with `rerun_errors` off)."""
    results = out_dir / "results.json"
    kept = list(read_results(results).tasks) if results.is_file() else []
    return [r for r in kept if finished(r)] if rerun_errors else kept


def discard_partial(out_dir: Path, task_id: str, cassette: Path | None) -> None:
    """Remove what an unfinished attempt at a task left behind."""
    RunFolder(out_dir).discard(task_id)
    if cassette is not None:
        cassette.unlink(missing_ok=True)
        for partial in cassette.parent.glob(f".{cassette.name}.*.tmp"):  # a save killed midway
            partial.unlink(missing_ok=True)
