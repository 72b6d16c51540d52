"""A task's adequacy.toml: its survivors judged equivalent, and the figures last measured.

    [measured]                 # what `endstate tasks adequacy` counted on the reference
    mutants = 53
    killed = 52
    equivalent = 1

    [[equivalent]]
    mutant = "pkg/mod.py:12:8:Lt>LtE"
    reason = "n is never equal to the limit here: the loop stops one short of it"

The equivalents are read by `tasks adequacy` (not graded again); the measured figures
are what a run card shows for the task. `tasks adequacy` checks them against what it
counts, so a card never shows figures the task no longer earns.
"""

from __future__ import annotations

import msgspec

from endstate.errors import ManifestError
from endstate.task._manifest import Task

__all__ = ["ADEQUACY_FILE", "Equivalent", "Measured", "Triage", "load_equivalents", "load_triage",
           "recorded_adequacy"]

#: The triage of a task's surviving mutants, in its folder.
ADEQUACY_FILE = "adequacy.toml"


class Equivalent(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    mutant: str
    reason: str


class Measured(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A task's mutants, how many its graders killed, how many are equivalent."""
    mutants: int
    killed: int
    equivalent: int = 0

    def line(self) -> str:
        """`killed/judged killed`, the survivors and the equivalents, as the card and the viewer print it."""
        survived = self.mutants - self.equivalent - self.killed
        return (f"{self.killed}/{self.mutants - self.equivalent} mutants killed"
                + (f", {survived} survived" if survived else "")
                + (f", {self.equivalent} equivalent" if self.equivalent else ""))


class Triage(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    equivalent: list[Equivalent] = []
    measured: Measured | None = None


def load_triage(task: Task) -> Triage:
    """The task's adequacy.toml, strictly decoded (an empty Triage without one)."""
    path = task.root / ADEQUACY_FILE
    if not path.is_file():
        return Triage()
    try:
        triage = msgspec.toml.decode(path.read_bytes(), type=Triage)
    except msgspec.ValidationError as exc:
        raise ManifestError(f"{path}: {exc} (each [[equivalent]] has `mutant` and `reason`; [measured] has "
                            "`mutants`, `killed` and `equivalent`; nothing else)") from None
    except msgspec.DecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML ({exc})") from None
    seen: set[str] = set()
    for number, entry in enumerate(triage.equivalent, start=1):
        if not entry.reason.strip():
            raise ManifestError(f"{path}: equivalent[{number}] ({entry.mutant}) has an empty `reason`: say why the "
                                "mutant behaves as the reference does")
        if entry.mutant in seen:
            raise ManifestError(f"{path}: equivalent[{number}] names {entry.mutant} a second time: keep one")
        seen.add(entry.mutant)
    measured = triage.measured
    if measured is not None and not 0 <= measured.killed <= measured.mutants - measured.equivalent:
        raise ManifestError(f"{path}: [measured] killed = {measured.killed} is not between 0 and mutants - "
                            f"equivalent ({measured.mutants - measured.equivalent}): copy the figures "
                            "`endstate tasks adequacy` prints")
    return triage


def load_equivalents(task: Task) -> dict[str, str]:
    """mutant id -> why it is equivalent, from the task's adequacy.toml (empty without one)."""
    return {entry.mutant: entry.reason for entry in load_triage(task).equivalent}


def recorded_adequacy(tasks: list[Task]) -> dict[str, Measured]:
    """Task id -> its measured adequacy, for the tasks whose adequacy.toml records one.
    A file that does not decode is left off: `tasks adequacy` and `tasks check` name it."""
    found = {}
    for task in sorted(tasks, key=lambda t: t.id):
        try:
            measured = load_triage(task).measured
        except ManifestError:
            continue
        if measured is not None:
            found[task.id] = measured
    return found
