"""A run folder: where each attempt's transcript, end-state diff and agent work files live.

    transcripts/<stem>.json   what the agent saw and did
    diffs/<stem>.diff         the sealed end state against the fixture
    endstates/<stem>.tar.gz   the sealed end state itself, what `endstate regrade` grades again
    work/<stem>/              the agent process's job, journal and outcome files

`stem` is `attempt_stem(task_id, attempt)`. The runner, resume, the Ray node, the viewer
and the pytest plugin all take these paths from here; a cassette's path is the cassettes
package's (`cassette_file`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunFolder"]


@dataclass(frozen=True)
class RunFolder:
    root: Path

    def transcript(self, stem: str) -> Path:
        return self.root / "transcripts" / f"{stem}.json"

    def diff(self, stem: str) -> Path:
        return self.root / "diffs" / f"{stem}.diff"

    def end_state(self, stem: str) -> Path:
        return self.root / "endstates" / f"{stem}.tar.gz"

    def work(self, stem: str) -> Path:
        return self.root / "work" / stem

    def attempt_files(self, stem: str) -> list[Path]:
        """Every file one attempt left in the folder, transcript and diff first."""
        work = self.work(stem)
        found = [self.transcript(stem), self.diff(stem), self.end_state(stem), *(sorted(work.rglob("*")) if work.is_dir() else [])]
        return [path for path in found if path.is_file()]

    def clear(self) -> None:
        """Remove every attempt's files an earlier run left here, before a new run replaces it
        (`--overwrite`): an attempt of the new run that leaves no end state (an error before
        sealing) must never be read with the old run's, which `regrade` would grade and the
        viewer and `export` show as the new attempt's."""
        for folder in ("transcripts", "diffs", "endstates", "work"):
            shutil.rmtree(self.root / folder, ignore_errors=True)

    def discard(self, stem: str) -> None:
        """Remove what an unfinished attempt left (its transcript and work files)."""
        self.transcript(stem).unlink(missing_ok=True)
        self.end_state(stem).unlink(missing_ok=True)
        shutil.rmtree(self.work(stem), ignore_errors=True)
