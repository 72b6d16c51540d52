"""Where `report` and `view` write when not told, and the refusal to write over an old report."""

from __future__ import annotations

import os
from pathlib import Path

from endstate.errors import UserError

__all__ = ["default_out", "refuse_existing"]


def default_out(runs: list[Path], name: str) -> Path:
    """`name` beside the inputs: inside the one run folder, or in the folder the runs share
    (./runs when they share none), never the current folder's runs/ whatever the inputs."""
    folders = [Path(r) if Path(r).is_dir() else Path(r).parent for r in runs]
    if len(folders) == 1:
        return folders[0] / name
    try:
        shared = Path(os.path.commonpath([f.resolve() for f in folders]))
    except ValueError:  # no common root (other drives)
        shared = Path("/")
    return (shared if shared != Path(shared.anchor) else Path("runs")) / name


def refuse_existing(paths: tuple[Path, ...], overwrite: bool, flag: str = "--out") -> None:
    existing = [p for p in paths if p.exists()]
    if existing and not overwrite:
        raise UserError(f"{existing[0]} already holds a report: pass --overwrite to replace it, "
                        f"or another {flag}")
