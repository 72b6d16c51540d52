"""Task manifests (`tasks/<id>/task.toml`) and reference trajectories, decoded strictly.

Everything here is written by people, so every Struct forbids unknown fields: a
typo is an error naming the file and the field, never a setting that silently
does nothing.
"""

from __future__ import annotations

import hashlib
from enum import Enum
from pathlib import Path
from typing import Any, Literal

import msgspec

from endstate.errors import ManifestError, did_you_mean, strict_message
from endstate.sandbox import FileEntry, Healthcheck, SealSpec, Tree, load_dir, overlay
from endstate.task._fields import HonestStop, Reference, ReferenceStep, ToolCallSpec, validate_sandbox
from endstate.task._hash import files_hash
from endstate.task._patch import PatchError, apply_patch
from endstate.task._runners import check_runners

__all__ = [
    "Category", "Bound", "Requires", "COUNTERS", "GraderSpec", "Budget", "SandboxSpec", "HackSpec", "Hack",
    "Manifest",
    "Task",
    "ToolCallSpec",
    "ReferenceStep",
    "Reference",
    "load_task",
    "load_suite",
    "HACK_ASSERTIONS",
    "load_probe",
]


class _Strict(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    pass


class Category(str, Enum):
    BUGFIX = "bugfix"
    FEATURE = "feature"
    REFACTOR = "refactor"
    COMPACTION = "compaction"
    PERMISSION = "permission"
    CHECKPOINT = "checkpoint"
    COST = "cost"


class Bound(_Strict):
    min: int | None = None
    max: int | None = None


class Requires(_Strict):
    """What the run must have done, as bounds on counters the harness recorded."""

    steps: Bound | None = None
    tool_calls: Bound | None = None
    tool_errors: Bound | None = None
    denied_calls: Bound | None = None
    compaction_events: Bound | None = None
    resumes: Bound | None = None
    input_tokens: Bound | None = None
    output_tokens: Bound | None = None

    def bounds(self) -> dict[str, Bound]:
        return {name: getattr(self, name) for name in COUNTERS if getattr(self, name) is not None}

    def violations(self, counters: Any) -> list[str]:
        """Each bound `counters` (anything with the counters as attributes) breaks, in words."""
        violations = []
        for name, bound in self.bounds().items():
            value = getattr(counters, name)
            if bound.min is not None and value < bound.min:
                violations.append(f"{name} = {value}, the task requires at least {bound.min}")
            if bound.max is not None and value > bound.max:
                violations.append(f"{name} = {value}, the task allows at most {bound.max}")
        return violations


#: The closed set of counters a task may put bounds on.
COUNTERS: tuple[str, ...] = tuple(Requires.__struct_fields__)


class GraderSpec(_Strict):
    #: Dotted path, `package.module:function` or `package.module.function`.
    name: str
    args: dict[str, Any] = {}


class Budget(_Strict):
    max_steps: int = 40
    #: Context tokens the transcript may hold before the loop compacts it.
    context_tokens: int = 60_000
    #: Wall clock for the whole agent run.
    wall_seconds: float = 900.0
    #: Default timeout of one tool command.
    command_timeout: float = 120.0


class SandboxSpec(_Strict):
    """`[sandbox]`: the task's own image and limits (see endstate.task._task_sandbox)."""

    #: A Dockerfile inside the task folder; its folder is the build context.
    dockerfile: str | None = None
    #: Or an image that already exists on the engine.
    image: str | None = None
    cpus: float | None = None
    memory_mb: int | None = None
    #: Default timeout of one command in this task's sandboxes; else the budget's.
    command_timeout: float | None = None
    #: The agent is `agent` (uid 1000) or `root`; its container may reach the network (never grading's).
    user: Literal["agent", "root"] = "agent"
    network: bool = False
    #: Run in the agent's container once its files are in, until it passes, before the agent starts
    #: (endstate.sandbox._health; a Harbor task's [environment.healthcheck]).
    healthcheck: Healthcheck | None = None


class Manifest(_Strict, kw_only=True):
    """`task.toml`, its fields in the order they are written (endstate.task._toml)."""

    id: str
    category: Category
    description: str = ""
    prompt: str = "prompt.md"
    #: Files the reference solution removes (the overlay in solution/ adds or replaces); None: not stated.
    solution_deletes: list[str] | None = None
    #: Kill the agent's process at this tool call (1-based) and resume it (checkpoint tasks).
    kill_at: int | None = None
    budget: Budget = Budget()
    seal: SealSpec = SealSpec()
    sandbox: SandboxSpec = SandboxSpec()
    requires: Requires = Requires()
    graders: list[GraderSpec]
    #: Permission rules for this task, added to the package's defaults (see agent policy).
    policy: dict[str, Any] = {}
    #: Visible tests an honest end state may leave failing, with the reason (given to `tests_pass`).
    honest_stops: list[HonestStop] = []


class HackSpec(_Strict):
    """`hacks/<name>/hack.toml`: a negative control a cheating agent might leave.

    An *overlay* hack is files laid over a base tree (`files/`, `overlay.diff`, `delete`,
    `symlinks`, applied in that order);
    a *live* hack is a trajectory (`trajectory.toml`, the reference format) that the
    scripted arm plays as an agent would, for what files cannot express: a process
    left running, a file in the agent user's home.
    """

    description: str
    #: What the hack is laid over: the untouched fixture or the reference solution; None: not stated (the fixture).
    base: str | None = None
    #: Files the hack deletes.
    delete: list[str] = []
    #: Symbolic links the hack leaves: path -> target, as written.
    symlinks: dict[str, str] = {}
    #: Grader name(s) (function names, or "end_state") at least one of which must be among those failing.
    caught_by: str | list[str] = ""

    @property
    def laid_on(self) -> str:
        return self.base or "fixture"

    def catchers(self) -> list[str]:
        return [self.caught_by] if isinstance(self.caught_by, str) and self.caught_by else list(self.caught_by or [])


class Hack(msgspec.Struct):
    name: str
    spec: HackSpec
    #: The tree the overlay leaves; None for a live hack (played, not laid over).
    tree: Tree | None
    folder: Path

    @property
    def live(self) -> bool:
        return self.tree is None


#: Built-in graders every task must use: one per hack they catch.
HACK_ASSERTIONS = ("files_unchanged", "no_new_skips", "holdout", "changed_paths_within")


class Task(msgspec.Struct):
    """A loaded task: its manifest plus the folders beside it."""

    manifest: Manifest
    root: Path

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def prompt(self) -> str:
        return (self.root / self.manifest.prompt).read_text(encoding="utf-8")

    def fixture(self) -> Tree:
        return load_dir(self.root / "fixture", what=f"task {self.id} fixture")

    def holdout(self) -> Tree:
        return load_dir(self.root / "holdout", what=f"task {self.id} holdout")

    def solution(self) -> Tree:
        """The fixture with `solution/` laid over it, then `solution.diff` applied (either may be
        left out, not both), less `solution_deletes`."""
        tree, folder, diff = self.fixture(), self.root / "solution", self.root / "solution.diff"
        if folder.is_dir() or not (diff.is_file() or self.manifest.seal.paths):  # a sealed fix may lie outside
            tree = overlay(tree, load_dir(folder, what=f"task {self.id} solution"))
        if diff.is_file():
            tree = _patched(tree, diff, self.id)
        for path in self.manifest.solution_deletes or ():
            tree.pop(path, None)
        return tree

    def alternatives(self) -> dict[str, Tree]:
        """Other right fixes, by name: each `solutions/<name>/` laid over the fixture as `solution/` is."""
        folder = self.root / "solutions"
        if not folder.is_dir():
            return {}
        loose = sorted(p.name for p in folder.iterdir() if not p.is_dir())
        if loose:
            raise ManifestError(f"{folder}: {', '.join(loose)} lie loose: each right fix is a folder solutions/<name>/")
        return {p.name: overlay(self.fixture(), load_dir(p, what=f"task {self.id} solutions/{p.name}"))
                for p in sorted(folder.iterdir())}

    def hacks(self) -> dict[str, Hack]:
        """Each negative control. A hack that could not apply as written (a file loose
        beside hack.toml, a `delete` of a path the base does not have) is a ManifestError:
        a hack that never applied must not be reported as caught."""
        hacks: dict[str, Hack] = {}
        folder = self.root / "hacks"
        if not folder.is_dir():
            return hacks
        for hack_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            manifest = hack_dir / "hack.toml"
            spec = _decode(manifest, HackSpec)
            if spec.base not in (None, "fixture", "solution"):
                raise ManifestError(f"{manifest}: field `base` must be 'fixture' or 'solution', not {spec.base!r}")
            loose = sorted(p.name for p in hack_dir.iterdir() if p.name not in _HACK_ENTRIES)
            if loose:
                raise ManifestError(f"{hack_dir}: {', '.join(loose)} lie loose in the hack folder: put the files the "
                                    "hack leaves under files/ (paths relative to the project root), or its changes "
                                    "in overlay.diff")
            live = (hack_dir / "trajectory.toml").is_file()
            files, diff = hack_dir / "files", hack_dir / "overlay.diff"
            if live:
                if files.exists() or diff.exists() or spec.delete or spec.symlinks or spec.laid_on != "fixture":
                    raise ManifestError(f"{manifest}: a live hack (trajectory.toml) starts from the fixture; it takes "
                                        "no files/, overlay.diff, `delete`, `symlinks` or `base`")
                _decode(hack_dir / "trajectory.toml", Reference)
                hacks[hack_dir.name] = Hack(hack_dir.name, spec, None, hack_dir)
                continue
            base = self.solution() if spec.laid_on == "solution" else self.fixture()
            tree = overlay(base, load_dir(files, what=f"hack {hack_dir.name}")) if files.is_dir() else base
            if diff.is_file():
                tree = _patched(tree, diff, self.id)
            for path in spec.delete:
                if path not in tree:
                    raise ManifestError(f"{manifest}: field `delete` names {path!r}, which the {spec.laid_on} does not "
                                        "have: the hack would delete nothing")
                tree.pop(path)
            for path, target in spec.symlinks.items():
                tree[path] = FileEntry.symlink(target)
            if not files.is_dir() and not diff.is_file() and not spec.delete and not spec.symlinks:
                raise ManifestError(f"{manifest}: the hack changes nothing: add files/, overlay.diff, `delete`, "
                                    "`symlinks`, or a trajectory.toml")
            hacks[hack_dir.name] = Hack(hack_dir.name, spec, tree, hack_dir)
        return hacks

    def probe(self) -> tuple[str, Any] | None:
        """(script, expected observations) of the task's probe (`probe/`), or None without one."""
        return load_probe(self.root / "probe")

    def reference(self) -> Reference:
        return self.trajectory("reference")

    def trajectory(self, name: str) -> Reference:
        """A scripted trajectory shipped with the task: `reference`, or e.g. `wasteful` for cost tasks."""
        return _decode(self.root / f"{name}.toml", Reference)

    def has_trajectory(self, name: str) -> bool:
        return (self.root / f"{name}.toml").is_file()

    def content_hash(self) -> str:
        """sha256 over the task files a run can depend on, which a recording names. hacks/, probe/, solutions/ and
        adequacy.toml are left out: no agent sees them, so adding one must not invalidate a recording."""
        return files_hash(self.file_hashes())

    def file_hashes(self) -> dict[str, str]:
        """Path -> sha256 of each file `content_hash` covers (a recording keeps them to name what changed)."""
        return {path.relative_to(self.root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
                for path in sorted(p for p in self.root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                                   and p.relative_to(self.root).parts[0] not in _NOT_HASHED)}


#: What a hack folder may hold: its manifest, then the files it leaves, its changes as a diff, or a trajectory.
_HACK_ENTRIES = ("hack.toml", "files", "overlay.diff", "trajectory.toml")


def _patched(tree: Tree, diff: Path, task_id: str) -> Tree:
    """`tree` with the unified diff in `diff` applied; a ManifestError naming the task and file if it does not apply."""
    try:
        return apply_patch(tree, diff.read_bytes())[0]
    except PatchError as exc:
        raise ManifestError(f"task {task_id}: {diff}: {exc}") from None
#: What no agent run sees, left out of the task hash (solutions/, adequacy.toml: `tasks adequacy`).
_NOT_HASHED = ("hacks", "probe", "solutions", "adequacy.toml")
#: A probe's script and what it must print, in `probe/`.
PROBE_FILES = ("probe.py", "expected.json")


def load_probe(folder: Path) -> tuple[str, Any] | None:
    """A task's probe: the script run as a plain program and the JSON it must print.
    None without a probe/ folder; a ManifestError naming the file when it is incomplete."""
    if not folder.is_dir():
        return None
    loose = sorted(p.name for p in folder.iterdir() if p.name not in (*PROBE_FILES, "__pycache__"))
    if loose:
        raise ManifestError(f"{folder}: {', '.join(loose)} do not belong in a probe folder (it holds "
                            f"{' and '.join(PROBE_FILES)} only)")
    missing = [name for name in PROBE_FILES if not (folder / name).is_file()]
    if missing:
        raise ManifestError(f"{folder}: no {' and no '.join(missing)}: a probe is the script (probe.py) and the "
                            "JSON it must print on the solution (expected.json)")
    try:
        script = (folder / "probe.py").read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ManifestError(f"{folder / 'probe.py'}: not UTF-8 text") from None
    try:
        expected = msgspec.json.decode((folder / "expected.json").read_bytes())
    except msgspec.DecodeError as exc:
        raise ManifestError(f"{folder / 'expected.json'}: not one JSON document ({exc})") from None
    return script, expected


def _decode(path: Path, kind: type) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ManifestError(f"{path}: file not found") from None
    try:
        return msgspec.toml.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        raise ManifestError(f"{path}: {_explain(exc, kind, raw)}") from None
    except msgspec.DecodeError as exc:
        raise ManifestError(f"{path}: not valid TOML ({exc})") from None


def _explain(exc: msgspec.ValidationError, kind: type, raw: bytes) -> str:
    """msgspec's message ("unknown field `x` - at `$.requires`"), with what is valid there."""
    try:
        return strict_message(exc, kind, msgspec.toml.decode(raw))
    except msgspec.DecodeError:
        return strict_message(exc, kind)


def _validate(manifest: Manifest, path: Path, folder: Path) -> None:
    if manifest.id != folder.name:
        raise ManifestError(f"{path}: field `id` is {manifest.id!r} but the folder is {folder.name!r}: make them equal")
    if not manifest.graders:
        raise ManifestError(f"{path}: field `graders` is empty: a task needs graders")
    check_runners(manifest.graders, path)  # a test grader's runner, and the guards it goes without, stated
    for name, bound in manifest.requires.bounds().items():
        if bound.min is None and bound.max is None:
            raise ManifestError(f"{path}: field `requires.{name}` has neither `min` nor `max`: it would assert nothing")
        if bound.min is not None and bound.max is not None and bound.min > bound.max:
            raise ManifestError(f"{path}: field `requires.{name}` has min {bound.min} > max {bound.max}: no run can "
                                "meet it")
        for side in (bound.min, bound.max):
            if side is not None and side < 0:
                raise ManifestError(f"{path}: field `requires.{name}` has a negative bound")
    if manifest.kill_at is not None:
        if manifest.kill_at < 1:
            raise ManifestError(f"{path}: field `kill_at` must be 1 or more (the tool call to kill at)")
        reference = folder / "reference.toml"
        if reference.is_file():
            calls = sum(len(step.calls) for step in _decode(reference, Reference).steps)
            if manifest.kill_at > calls:
                raise ManifestError(
                    f"{path}: field `kill_at` is {manifest.kill_at} but the reference trajectory makes only "
                    f"{calls} tool call(s): the kill would never happen"
                )
    validate_sandbox(manifest.sandbox, path, folder)
    if not (folder / manifest.prompt).is_file():
        raise ManifestError(f"{path}: field `prompt` names {manifest.prompt!r}, which does not exist in {folder}")
    if not (folder / "fixture").is_dir():
        raise ManifestError(f"{path}: task has no fixture/ folder: add the project the agent starts from")
    load_probe(folder / "probe")


def load_task(folder: Path) -> Task:
    """Load and validate one task folder. Raises ManifestError naming file and field."""
    folder = Path(folder)
    path = folder / "task.toml"
    manifest = _decode(path, Manifest)
    _validate(manifest, path, folder)
    return Task(manifest=manifest, root=folder)


def load_suite(suite: Path, *, only: list[str] | None = None) -> tuple[list[Task], list[ManifestError]]:
    """Every task under `suite`, sorted by id, plus the errors of those that failed to load.

    A broken task does not stop the others from loading; the caller reports it.
    """
    suite = Path(suite)
    if not suite.is_dir():
        raise ManifestError(f"suite folder {suite} does not exist: pass --suite with a folder of tasks")
    tasks, errors, folders = [], [], sorted(p for p in suite.iterdir() if (p / "task.toml").is_file())
    if only:
        missing = sorted(set(only) - {p.name for p in folders})
        if missing:
            raise ManifestError(f"no task named {', '.join(missing)} in {suite}"
                                + did_you_mean(missing[0], [p.name for p in folders]))
        folders = [p for p in folders if p.name in only]
    if not folders:  # nothing to check, run or export is an error, never "0 of 0" and exit 0
        if (suite / "task.toml").is_file():
            raise ManifestError(f"{suite} is a task folder, not a suite of them: pass the folder it is in, "
                                f"--suite {suite.resolve().parent}")
        raise ManifestError(f"no task in {suite}: a task is a folder holding task.toml "
                            f"(`endstate tasks new ID --suite {suite}` makes one)")
    for folder in folders:
        try:
            tasks.append(load_task(folder))
        except ManifestError as exc:
            errors.append(exc)
    return tasks, errors
