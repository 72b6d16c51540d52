"""The options of a fork (`--fork-at`) and of record modes (`--record-mode`) on eval and record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from endstate.cli._run import FOLDER

__all__ = ["_RECORD_MODES", "_fork_option", "_eval_fork", "_fork", "_record_options", "_replay_options",
           "_not_plain_record"]

#: endstate.run.RECORD_MODES, listed here so --help does not load the run package.
_RECORD_MODES = ("none", "once", "new_episodes", "all")


def _fork_option(command: Any) -> Any:
    return click.option("--fork-at", type=_ForkTurn(), default=None, metavar="K|last",
                        help="With --replay A and --model B: serve agent turns 0..K-1 from A's cassettes, "
                        "answer the rest with B, and record each task into a new cassette "
                        "(last: each cassette's last turn is answered by B).")(command)


class _ForkTurn(click.ParamType):
    name = "turn"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        if value == "last":
            return -2  # endstate.cassettes.LAST_TURN
        if not str(value).isdigit():
            self.fail(f"{value!r} is not a turn: pass a number from 0, or last", param, ctx)
        return int(value)


def _eval_fork(out: Path | None, replay: Path | None, fork_at: int,
               options: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """eval's results folder and run options for a fork, which records into the run's own folder."""
    if replay is None:
        raise click.UsageError("--fork-at needs --replay: the folder of the cassettes to fork")
    if not options["model"]:
        raise click.UsageError("--fork-at needs --model: the model that answers from turn K on")
    _local_only(options["executor"])
    from endstate.cli._run import _slug

    out = out or Path("runs") / _slug(options["agent"], options["model"])
    return out, _fork(replay, fork_at, out / "cassettes")


def _fork(replay: Path | None, fork_at: int, cassettes: Path) -> dict[str, Any]:
    """The run options of a fork; the run makes `cassettes` once every check has passed (`_run`)."""
    return {"mode": "record", "cassettes": str(cassettes), "overwrite": True, "fork_from": str(replay),
            "fork_at": fork_at}


def _replay_options(command: Any) -> Any:
    """`eval`'s --replay and --match, and --fork-at."""
    options = [
        click.option("--replay", type=click.Path(path_type=Path), default=None,
                     help="Cassette folder to replay offline (no network, no API key); with --fork-at, to fork."),
        click.option("--match", type=click.Choice(["strict", "sequence"]), default="strict", show_default=True,
                     help="strict: by request hash; sequence: recorded answers in order per channel."),
        _fork_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _record_options(command: Any) -> Any:
    """`record`'s --cassettes and --overwrite, --record-mode, and --replay with --fork-at."""
    options = [
        click.option("--cassettes", type=FOLDER, default=None,
                     help="Where to write (default: cassettes/[<agent>-]<model-slug>)."),
        click.option("--overwrite", is_flag=True, help="Replace existing cassettes."),
        click.option("--record-mode", type=click.Choice(_RECORD_MODES), default=None,
                     help="none: replay every task; once: record only tasks without a cassette; new_episodes: "
                     "replay each while it matches, live from its first divergence, and rewrite it; all: record "
                     "all again."),
        click.option("--replay", type=click.Path(path_type=Path), default=None,
                     help="With --fork-at: the cassette folder to fork (the new cassettes go to --cassettes)."),
        _fork_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _not_plain_record(folder: Path, record_mode: str | None, replay: Path | None,
                      fork_at: int | None, executor: str = "local") -> dict[str, Any] | None:
    """The run options of a record with a record mode or a fork; None for a plain record."""
    if fork_at is not None or replay is not None or record_mode not in (None, "none", "all"):
        _local_only(executor)
    if fork_at is not None or replay is not None:
        if record_mode is not None:
            raise click.UsageError("--record-mode and --fork-at are two ways to record: pass one")
        if fork_at is None:
            raise click.UsageError("--replay on record forks a recording: pass --fork-at K as well")
        if replay is None:
            raise click.UsageError("--fork-at needs --replay: the folder of the cassettes to fork")
        return _fork(replay, fork_at, folder)
    if record_mode == "none":
        return {"mode": "replay", "cassettes": str(folder)}
    if record_mode is not None:  # each task's plan says whether it records over its cassette
        return {"mode": "record", "cassettes": str(folder), "overwrite": True, "record_mode": record_mode}
    return None


def _local_only(executor: str) -> None:
    if executor != "local":  # a Ray node is sent the cassettes to replay, not a parent or a folder to amend
        raise click.UsageError("--fork-at, --record-mode once and new_episodes run on the local executor only: "
                               "drop --executor ray")
