"""Which cassette each task's agent gets: recorded, replayed, or forked from an earlier one.

    plan = plan_cassette(config, out_dir, stem)     None for a live run without cassettes

Record modes (`record --record-mode`), after vcrpy's:

    none          replay every task (what `eval --replay` does)
    once          record only the tasks that have no cassette; replay the others
    new_episodes  replay each cassette while it matches, live from the first request it has no
                  answer for; the cassette is rewritten with the new tail (a fork of itself)
    all           record every task again (`record --overwrite`)

A fork (`--fork-at K` with a parent folder) serves turns 0..K-1 of each task from the
parent and answers the rest live, into a new cassette. The parent of a new_episodes fork
is the cassette it replaces, so it is first copied to `<out>/parents/`: a rerun after an
infra error, or `--resume`, still reads the original.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

from endstate.cassettes import FIRST_DIVERGENCE, CassetteJob, RunMode, cassette_file, load
from endstate.errors import CassetteError
from endstate.run._config import RunConfig

__all__ = ["RECORD_MODES", "CassettePlan", "plan_cassette", "stale_recording"]

RECORD_MODES: tuple[str, ...] = ("none", "once", "new_episodes", "all")

#: Where a new_episodes run keeps the cassettes it replaces, inside the run folder.
PARENTS_DIR = "parents"


class CassettePlan(NamedTuple):
    """One task's cassette: "record" (a fork when `parent` is set) or "replay"."""

    mode: str
    path: Path
    parent: str = ""
    fork_at: int = FIRST_DIVERGENCE
    overwrite: bool = False

    def job(self, match: str, header: dict) -> CassetteJob:
        return CassetteJob(mode=self.mode, path=str(self.path), match=match, overwrite=self.overwrite,
                           header=header, parent=self.parent, fork_at=self.fork_at)


def plan_cassette(config: RunConfig, out_dir: Path, stem: str) -> CassettePlan | None:
    """What the task attempt `stem` records or replays; decide once per run (a new_episodes
    plan copies the cassette it will replace)."""
    if config.mode not in (RunMode.RECORD, RunMode.REPLAY) or config.cassettes is None:
        return None
    path = cassette_file(config.cassettes, stem)
    if config.mode == RunMode.REPLAY or config.record_mode == "none":
        return CassettePlan("replay", path)
    if config.fork_from is not None:
        return CassettePlan("record", path, str(cassette_file(config.fork_from, stem)), config.fork_at,
                            overwrite=config.overwrite)
    if config.record_mode == "once" and _complete(path):
        return CassettePlan("replay", path)
    if config.record_mode == "new_episodes":
        kept = cassette_file(Path(out_dir) / PARENTS_DIR, stem)
        if not kept.exists() and _complete(path):
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, kept)
        if kept.exists():
            return CassettePlan("record", path, str(kept), FIRST_DIVERGENCE, overwrite=True)
    return CassettePlan("record", path, overwrite=config.overwrite or config.record_mode in ("all", "once",
                                                                                              "new_episodes"))


def stale_recording(config: RunConfig, stem: str) -> Path | None:
    """The cassette an unfinished attempt left that a rerun must not read: a recording
    (not one a once run replays, which is whole)."""
    if config.mode != RunMode.RECORD or config.cassettes is None:
        return None
    path = cassette_file(config.cassettes, stem)
    if config.record_mode == "once" and _complete(path):
        return None
    return path


def _complete(path: Path) -> bool:
    """A cassette that loads and has its end marker (a killed recording has none)."""
    if not path.is_file():
        return False
    try:
        return load(path).complete
    except CassetteError:
        return False
