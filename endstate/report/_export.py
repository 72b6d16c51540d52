"""A run folder exported for other tools: Harbor's ATIF trajectories or one Inspect `.eval` log.

    report = export_run(Path("runs/x"), "atif")      # runs/x/atif/<task>.json, one per attempt
    report = export_run(Path("runs/x"), "inspect")   # runs/x/inspect.eval

An attempt without a readable transcript is left out and named in `ExportReport.missing`;
the others are written all the same. The same folder exports to the same content (see
`_export_input`); the `.eval` writer says where its bytes may still differ.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from endstate.errors import UserError, cannot_write
from endstate.report._atif import write_atif
from endstate.report._export_input import RunExport, read_export_input
from endstate.report._inspect_log import write_inspect_log

__all__ = ["FORMATS", "ExportReport", "export_run"]

#: Format name -> its writer, and what `--out` names when it is not given (inside the run folder).
FORMATS: dict[str, tuple[Callable[[RunExport, Path], None], str]] = {
    "atif": (write_atif, "atif"),
    "inspect": (write_inspect_log, "inspect.eval"),
}


class ExportReport(msgspec.Struct, frozen=True):
    format: str
    #: The file or folder written.
    path: Path
    exported: list[str]
    missing: dict[str, str]


def export_run(folder: Path, format: str, out: Path | None = None, *, overwrite: bool = False) -> ExportReport:
    """Write the run in `format` ("atif" or "inspect") to `out` (default: inside the run folder);
    a file the export would replace (an earlier export, maybe edited since) is a UserError unless
    `overwrite`."""
    if format not in FORMATS:
        raise UserError(f"unknown export format {format!r}; valid formats: {', '.join(FORMATS)}")
    writer, default = FORMATS[format]
    source = read_export_input(folder)
    path = Path(out) if out is not None else Path(folder) / default
    if format == "inspect" and path.suffix != ".eval":  # Inspect finds a log's reader by its extension
        raise UserError(f"--out {path}: an Inspect log must end in .eval, or Inspect cannot open it: "
                        f"pass --out {path.with_name(path.name + '.eval')}")
    targets = [path] if format == "inspect" else [path / f"{a.stem}.json" for a in source.attempts]
    held = next((target for target in targets if target.exists()), None)
    if held is not None and not overwrite:
        raise UserError(f"{held} already exists (an earlier export, maybe edited since): pass --overwrite to "
                        "replace it, or another --out")
    try:
        writer(source, path)
    except OSError as exc:  # what the writers' own helpers did not name (WriteError names the folder)
        raise cannot_write(path, exc) from None
    return ExportReport(format, path, [a.stem for a in source.attempts], source.missing)
