"""`endstate tasks import swebench`: tasks from a SWE-bench dataset and local clones.

One task per instance of the dataset (a parquet, JSON or JSONL file, or a dataset name:
`_swebenchdata`), with no network but PyPI's:

    fixture/        the repository's tree at `base_commit` (`git archive`: no history)
    solution.diff   the instance's `patch`: as given where it applies strictly, else as SWE-bench's
                    harness applies it (`git apply`, then its fallbacks: `_gitapply`)
    holdout/        the files `test_patch` adds or changes, as it leaves them (a file it deletes
                    is left out of the fixture, as `tasks new` leaves out tests a fix removes)
    task.toml       `tests_pass` over PASS_TO_PASS and `holdout` over FAIL_TO_PASS, each run
                    the project's own way (`project_test_command`: its layout and pytest
                    configuration): holdout over exactly those node ids, tests_pass over the
                    files SWE-bench's run names with the ids graded in it (`tests`, as SWE-bench
                    reads them: `grading/_listed.py`), `min_tests` = how many; plus
                    files_unchanged, no_new_skips and changed_paths_within
    prompt.md       the instance's `problem_statement`
    reference.toml, hacks/   as `endstate tasks new` makes them from the same fix

The clone of `owner/name` is looked for under the repos folder as `owner__name`,
`owner/name` or `name` (each also with `.git`; a bare clone will do). Every task written
is then checked (`tasks check`); an instance that cannot be made, or does not check out,
is listed with its reason and leaves no folder behind, and never stops the others.
A project that declares dependencies (what `tasks new` reads: pyproject, setup.cfg,
setup.py, tox.ini, requirements files) gets an image of its own, as `tasks new` gives it:
the default sandbox image plus those packages, installed offline from wheels the host
downloads (PyPI, the one download) and pins by sha256 (`image/`); an instance that names its
`version` gets what SWE-bench's harness installs for that version too (`_swebenchenv`). An instance
whose tests need packages neither declares does not check out, and is listed saying so.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import shutil
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import NamedTuple

import msgspec

from endstate.authoring._build import build_inputs, builds_matplotlib, built_fixture_products, compiled_sources
from endstate.authoring._clones import base_tree, clone_git, find_clone, requirements_at, scm_version
from endstate.authoring._condaenv import broken_imports
from endstate.authoring._fix import DEFAULT_TEST_GLOBS, FixSplit
from endstate.authoring._gitapply import apply_field, strict_diff
from endstate.authoring._installed import generated_files, project_version, runtime_requirements, scm_schemes
from endstate.authoring._loopback import LOOPBACK_SAID, reads_httpbin_url
from endstate.authoring._new import (
    DESELECT_MAX,
    _hacks,
    _reference_toml,
    _write_tree,
    few_enough,
    fresh_folder,
    held_back,
    write_hacks,
)
from endstate.authoring._nodeids import (
    COMMAND_MAX,
    collected_ids,
    error_line,
    holds_the_clock,
    in_collected_order,
    match_ids,
    not_found_error,
    whole_files,
    with_whole_tests,
)
from endstate.authoring._offline import needs_the_network, network_host
from endstate.authoring._swebenchdata import Selection
from endstate.authoring._swebenchenv import SwebenchEnv, env_exports, python_deviation, swebench_env
from endstate.authoring._swebenchimages import about, instance_image, write_layer
from endstate.authoring._swebenchrecords import Instance, Skipped, log_fragments, read_instances, test_ids
from endstate.authoring._systools import system_packages
from endstate.authoring._taskimage import image_files, pinned_requirements, requirement_name, write_task_image
from endstate.authoring._testcommand import (
    SWEBENCH_RUNNERS,
    command_timeout,
    plugin_distributions,
    project_test_command,
    runner_args,
    runner_command,
)
from endstate.errors import EndstateError, UserError
from endstate.sandbox import Tree, matches_any
from endstate.task import Category, GraderSpec, Manifest, SandboxSpec, load_task, write_manifest

__all__ = ["Instance", "Skipped", "ImportReport", "read_instances", "import_swebench", "keep_checked"]


class ImportReport(msgspec.Struct):
    #: Tasks written and checked out (`keep_checked`).
    written: list[str] = []
    skipped: list[Skipped] = []
    #: Task id -> (its line in the file, its folder): written, not yet checked.
    made: dict[str, tuple[int, str]] = {}
    #: Some lines of the file were not valid instances (bad input, rather than instances that failed).
    bad_input: bool = False
    #: Task id -> seconds its making took (written or not).
    seconds: dict[str, float] = {}


#: At most this many characters of why an instance was not written (a grader's note can hold a whole log).
REASON_MAX = 1200


def _capped(text: str, limit: int) -> str:
    text = " ".join(line.rstrip() for line in text.strip().splitlines())  # one line, its indentation kept
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- one task ------------------------------------------------------------------------------------
def _split(instance: Instance, fixture: Tree, log: Callable[[str], None] = lambda line: None) -> FixSplit:
    """The instance as a fix taken apart, the way `tasks new` takes a commit apart."""
    solved, deleted, _ = apply_field("patch", instance.patch, fixture, log)
    tested, test_deleted, _ = apply_field("test_patch", instance.test_patch, fixture, log)
    fixed = sorted(p for p in set(fixture) | set(solved) if fixture.get(p) != solved.get(p))
    if set(test_deleted) & set(fixed):
        raise UserError(f"fields `patch` and `test_patch` both change {sorted(set(test_deleted) & set(fixed))[0]}")
    # A test file the fix deletes would only fail against the solution: the fixture leaves it out,
    # as `tasks new` leaves out the tests a fix removes (blinker 1.8.0 drops tests/test_saferef.py).
    fixture = {p: e for p, e in fixture.items() if p not in test_deleted}
    held = sorted(p for p in tested if fixture.get(p) != tested[p])
    both = sorted(set(fixed) & set(held))
    if both:
        raise UserError(f"fields `patch` and `test_patch` both change {both[0]}: the held-out copy would undo the fix")
    if not fixed:
        raise UserError("field `patch` changes no file")
    first = instance.problem_statement.strip().splitlines()
    return FixSplit(
        base=instance.base_commit, head=instance.base_commit, subject=(first[0] if first else instance.instance_id)[:200],
        body="", fixture=fixture, solution={p: solved[p] for p in fixed if p in solved},
        solution_deletes=deleted, holdout={p: tested[p] for p in held},
        parent_tests={p: fixture[p] for p in held if p in fixture}, fixed_paths=fixed,
    )


def _command(tree: Tree, targets: list[str], installed: list[str] | None) -> str:
    """The project's test command over `targets`, run by pytest: the dataset's ids are pytest's."""
    return project_test_command(tree, targets, installed=installed, pytest_ids=True)


def _installed_version(fixture: Tree, clone: Path, instance: Instance, log: Callable[[str], None]) -> str:
    """The version the project's install from the clone states: setuptools_scm's guess at `base_commit` where
    its build asks the VCS (SWE-bench's environment holds that, `3.7.0.dev1234+g...`), else the record's."""
    schemes = scm_schemes(fixture)
    version, how = scm_version(clone, instance.base_commit, schemes, str(instance.version or "")) if schemes \
        else ("", "")
    if version:
        log(f"version {version}: {how}")
    return version or str(instance.version or "")


def _runs_here(fixture: Tree, runner: str) -> None:
    """UserError when the project's tests cannot run under endstate's harness as SWE-bench runs them:
    a pytest of the tree's own under the image's pytest (pytest-dev/pytest's is the `tree-pytest` runner's)."""
    if runner == "pytest" and any(f"{top}_pytest/__init__.py" in fixture for top in ("", "src/")):
        raise UserError("the project is pytest itself: its tests exercise the tree's own pytest (SWE-bench installs "
                        "it in place), and endstate's harness runs the task image's pytest, never one from the "
                        "graded tree, so the fix would never run (only pytest-dev/pytest's records run the "
                        "tree's own, the `tree-pytest` runner)")


#: The memory of an imported instance's sandbox, in MB. SWE-bench's harness sets its containers no limit, and
#: a record's tests (a compiled project's, pytest 3's rewrite of a large module's twins) can outgrow the
#: sandbox's default of 1 GiB, which would refuse the record for a limit of endstate's own.
MEMORY_MB = 4096
#: The least wall clock of an imported instance's commands, in seconds (a larger suite gets more: `command_timeout`).
#: SWE-bench's harness gives an instance's whole run 30 minutes; the sandbox's default 120 s timed out seaborn
#: 3407's PASS_TO_PASS (a hundred plotting tests) and pylint 7277's on two cores shared by three imports.
COMMAND_SECONDS = 300


class Counted(NamedTuple):
    """Of a record's two lists, how many tests ran (were not skipped) on the solution in the task's image,
    and how many of FAIL_TO_PASS's skipped there."""

    passing: int
    failing: int
    skipped_failing: int = 0


def _task_toml(instance: Instance, split: FixSplit, protected: list[str], passing: list[str],
               failing: list[str], installed: list[str] | None, dockerfile: str | None,
               counts: Counted | None = None, notes: list[str] = (),
               about: Sequence[str] = ()) -> tuple[Manifest, list[str]]:
    # The project's own way of running tests (layout, configuration), with exactly these node ids;
    # `counts`: how many of each ran (were not skipped) on the solution, where that was counted
    # (`notes`: why fewer than it names).
    tested = {**split.fixture, **split.holdout}
    ran_passing, ran_failing, skipped_failing = counts or Counted(len(passing), len(failing))
    runner = SWEBENCH_RUNNERS.get(instance.repo, "pytest")

    exports = " ".join(env_exports(swebench_env(instance.repo, instance.version))[0])

    def args(ids: list[str], ran: int, listed: bool = False) -> dict:
        if runner == "pytest" and listed:  # SWE-bench's run: the files, each id's status read from it (_listed.py)
            files = list(dict.fromkeys(i.split("::", 1)[0] for i in failing + passing))
            made = {"command": _command(tested, files, installed), "tests": ids, "min_tests": ran}
        elif runner == "pytest":
            made = {"command": _command(tested, ids, installed), "min_tests": ran}
        else:
            made = runner_args(runner, list(split.holdout), ids, str(instance.version or ""))
        return {**made, "command": f"{exports} {made['command']}".strip()}  # as SWE-bench's script exports them

    graders = [GraderSpec("endstate.grading:tests_pass", args(passing, ran_passing, listed=True))] * bool(passing)
    graders += [
        GraderSpec("endstate.grading:files_unchanged", {"paths": protected, "allow_new": protected}),
        GraderSpec("endstate.grading:no_new_skips"),
        # FAIL_TO_PASS's tests that skip on the solution may skip: no more (see `holdout`).
        GraderSpec("endstate.grading:holdout", {**args(failing, ran_failing),
                                                **({"may_skip": skipped_failing} if runner == "pytest" and
                                                   skipped_failing else {})}),
        GraderSpec("endstate.grading:changed_paths_within", {"paths": split.fixed_paths + protected}),
    ]
    how = ("tests_pass running the files SWE-bench's run names and grading PASS_TO_PASS's node ids (`tests`) in it, "
           "holdout by node id" if runner == "pytest" else f"each id read from the output of {runner}'s own runner as "
           f"SWE-bench reads it; pytest's in-process guards do not reach that runner (`unguarded`)")
    if runner == "tree-pytest":  # the runner is the graded tree: what it prints is the end state's to say
        how = ("each id read from `pytest -rA`'s summary as SWE-bench reads it, printed by the graded tree's own "
               "pytest, which is the code under test: the harness's in-process guards are not in it and could not "
               "be trusted there (`unguarded`), and end_state does not scan its changed source for the runner's "
               "names, which are its own")
    header = [f"Imported by `endstate tasks import swebench`: {instance.instance_id}, {instance.repo} at "
              f"{instance.base_commit[:12]}.",
              f"tests_pass runs PASS_TO_PASS and holdout runs FAIL_TO_PASS, {how}.", *notes, *about,
              *([] if about else filter(None, [python_deviation(swebench_env(instance.repo, instance.version))]))]
    return Manifest(
        id=instance.instance_id, category=Category.BUGFIX, description=split.subject,
        sandbox=SandboxSpec(dockerfile=dockerfile, command_timeout=max(command_timeout(ran_passing) or 0, COMMAND_SECONDS),
                            memory_mb=MEMORY_MB),
        graders=graders), header


def _prompt(instance: Instance) -> str:
    return (instance.problem_statement.strip() + "\n\nPlease fix this in the project. Its tests must pass when you "
            "are done. Do not change, skip or remove existing tests; you may add new ones.\n")


def write_instance(instance: Instance, repos: Path | None, out: Path, log: Callable[[str], None] = lambda line: None,
                   *, backend: str | None = None, image: str = "", own_dockerfile: Path | None = None,
                   images: str | None = None) -> Path:
    """Write the task folder of one instance; UserError, naming the field, when it cannot be made
    (an EndstateError when the wheels of the project's dependencies cannot be had). With `backend`,
    the node ids are matched to those the task's image collects and counted there (`_faithful_ids`).
    `own_dockerfile`: the task's image is built from it (copied to image/Dockerfile), not from the
    dependencies the project declares. `images`: SWE-bench's own image of it, from that registry (`_swebenchimages`)."""
    folder = fresh_folder(out, instance.instance_id)
    failing, passing = test_ids(instance, "FAIL_TO_PASS"), test_ids(instance, "PASS_TO_PASS")
    if not failing:
        raise UserError("field `FAIL_TO_PASS` is empty: the held-out tests are what tells a fix from no fix")
    own = None if images is None else instance_image(instance.instance_id, instance.image, instance.base_commit,
                                                      images, log)
    clone = find_clone(repos or Path("."), instance.repo) if own is None else Path(".")
    fixture = base_tree(clone, instance.base_commit, log, repos) if own is None else dict(own.tree)
    _runs_here(fixture, SWEBENCH_RUNNERS.get(instance.repo, "pytest"))
    version = project_version(fixture, fallback=_installed_version(fixture, clone, instance, log) if own is None
                              else str(instance.version or ""))
    fixture.update(generated_files(fixture, version) if own is None else {})  # what the project's install writes
    split = _split(instance, fixture, log)
    protected = [g for g in DEFAULT_TEST_GLOBS if any(matches_any(p, [g]) for p in split.fixture)]
    protected += [p for p in split.holdout if not matches_any(p, protected)]  # held-out files are tests too
    hacks = _hacks(split, tuple(protected))
    pinned, installed = "", None  # an image of the author's own: what it installs is not known here
    env = swebench_env(instance.repo, instance.version)
    resolved = own_dockerfile is None and own is None  # the image is made here, from what the project declares
    declared, build, apt = build_inputs(split.fixture, env, log) if resolved else (split.fixture, [], [])
    asks = _at_setup_commit(instance, clone, declared, env, log) if resolved else declared
    if build and (changed := compiled_sources([*split.solution, *split.solution_deletes])):
        raise UserError(f"field `patch` changes a compiled source ({changed[0]}): the task's "
                        "build is made once, from the fixture, and a changed extension module fails `end_state`")
    left_out: list[str] = []  # declared, no wheel resolves: the image is made without them
    added = _declared_by_the_fix(split, log) if resolved else []
    if resolved:
        made = clone_git(clone, "show", "-s", "--format=%cI", instance.base_commit).decode().strip()
        pinned, installed = pinned_requirements(asks, keep=plugin_distributions(split.fixture), made=made,
                                                log=log, env=env, build=build, left_out=left_out, added=added)
    system = sorted({*system_packages(split.fixture), *apt}) if resolved else []
    locales = env_exports(env)[1] if resolved else []  # the locale the tests run in, generated in the image
    system = sorted({*system, "locales"}) if locales else system
    dockerfile = "image/Dockerfile" if pinned or system or own_dockerfile or own else None
    base = about(own, instance.eval_script) if own else []
    said = [f"PASS_TO_PASS: {', '.join(fragments)} left out, a fragment of a log line that SWE-bench's parser read "
            "as a test and that names none"] if (fragments := log_fragments(instance)) else []
    for line in said:
        log(line)
    if resolved and reads_httpbin_url(split.fixture):
        said.append(LOOPBACK_SAID)
    if left_out:  # said in the log as each went; on the task, for whoever reads its results
        said.append(f"Left out of the task's image: {', '.join(left_out)}, which the project declares "
                    "but of which no wheel resolves for its Python (the image installs wheels only); tests "
                    "that import them fail or skip.")
    manifest = _task_toml(instance, split, protected, passing, failing, installed, dockerfile, notes=said, about=base)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir()
    except FileExistsError:  # another import writing into the same folder meanwhile: its folder, never removed here
        raise UserError(f"{folder} was made meanwhile, by another import into {folder.parent}: give each import its "
                        "own --out") from None
    try:
        if pinned or system:
            write_task_image(folder, pinned, image_files(split.fixture, version) if pinned else None, system,
                             locales)
        if build and backend is not None:  # its extension modules, built in its image, join the fixture
            split.fixture.update(built_fixture_products(folder, instance.instance_id, declared, version, log))
        solution = {p: e for p, e in {**split.fixture, **split.solution}.items() if p not in split.solution_deletes}
        _write_tree(folder / "fixture", split.fixture)
        (folder / "solution.diff").write_bytes(strict_diff(instance.patch.encode("utf-8"), split.fixture, solution))
        _write_tree(folder / "holdout", split.holdout)
        (folder / "prompt.md").write_text(_prompt(instance), encoding="utf-8")
        if own_dockerfile is not None:
            (folder / "image").mkdir()
            shutil.copyfile(own_dockerfile, folder / "image" / "Dockerfile")
        elif own is not None:
            write_layer(folder, own)
        runner = SWEBENCH_RUNNERS.get(instance.repo, "pytest")
        reference = _reference_toml(split, project_test_command(split.fixture, _visible_files(
            passing + failing, split.fixture), installed=installed, pytest_ids=True) if runner == "pytest" else
            runner_command(runner, list(split.holdout), failing, by_hand=True))
        (folder / "reference.toml").write_text(reference.replace("`endstate tasks new`", "`endstate tasks import "
                                                                 "swebench`", 1), encoding="utf-8")
        write_hacks(folder, hacks, split.fixture, solution)
        write_manifest(folder, *manifest)
        load_task(folder)
        if backend is not None and runner == "pytest":  # another runner's ids are read from its output as given
            def rebuild(bounds: list[str], conda: bool = True, broken: Collection[str] = ()) -> str:
                pinned, _ = pinned_requirements(asks, keep=plugin_distributions(split.fixture), made=made,
                                                log=log, env=env, bounds=bounds, build=build, added=added,
                                                conda=conda, conda_broken=broken)
                shutil.rmtree(folder / "image")
                write_task_image(folder, pinned, image_files(split.fixture, version), system, locales)
                return pinned

            def faithful(conda: bool, broken: Collection[str] = ()
                         ) -> tuple[list[str], list[str], Counted, list[str]]:
                return held_back(lambda: _faithful_ids(folder, split, passing, failing, installed, backend, image,
                                                       log), lambda bounds: rebuild(bounds, conda, broken),
                                 split.fixture, pinned, log)

            try:
                passing, failing, counts, notes = faithful(conda=True)
            except UserError as exc:
                if env is None or not env.conda_env or env.conda_env not in asks:
                    raise
                # A package the conda file adds can break what would skip without it (xarray's cfgrib raises
                # RuntimeError, not ImportError, where conda's ecCodes library is not there): those whose import
                # raises so in the image are left out; where none does, or that is not enough, all of them.
                why = f"with the conda file's packages, {_capped(str(exc), 300)}"
                broken = broken_imports(folder, installed or [], backend, image, log)
                attempts: list[tuple[bool, list[str]]] = [(True, sorted(broken))] if broken else []
                for conda, leaving in [*attempts, (False, [])]:
                    said_why = "; ".join(f"{name} ({broken[name]})" for name in leaving)
                    log(f"{why}: the task's image is made again without "
                        + (f"those whose import raises there: {said_why}" if conda else "them"))
                    pinned = rebuild([], conda, leaving)
                    installed = [name for name in map(requirement_name, pinned.splitlines()) if name]
                    try:
                        passing, failing, counts, notes = faithful(conda, leaving)
                    except UserError as again:
                        if not conda:
                            raise
                        why = f"with the conda file's packages but {', '.join(leaving)}, {_capped(str(again), 300)}"
                        continue
                    notes.append("The task's image is made without "
                                 + (f"{said_why}, of SWE-bench's conda file {env.conda_env}: " if conda else
                                    f"the packages of SWE-bench's conda file {env.conda_env}: ") + f"{why}.")
                    break
            write_manifest(folder, *_task_toml(instance, split, protected, passing, failing, installed,
                                              dockerfile, counts, [*said, *notes], about=base))
            load_task(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _at_setup_commit(instance: Instance, clone: Path, declared: Tree, env: SwebenchEnv | None,
                     log: Callable[[str], None]) -> Tree:
    """`declared` with the requirements files (and conda environment file) SWE-bench's environment installs as
    its environment_setup_commit has them (SWE-bench reads them there, once per version, not at each record's
    base_commit)."""
    commit = str(instance.environment_setup_commit or "")
    if env is None or not (env.requirements or env.conda_env) or not commit or commit == instance.base_commit:
        return declared
    files = {**requirements_at(clone, commit, env.requirements, log),
             **(requirements_at(clone, commit, [env.conda_env], lambda line: None) if env.conda_env else {})}
    changed = sorted(path for path, entry in files.items() if path not in declared or declared[path].data != entry.data)
    if changed:
        log(f"requirements read at environment_setup_commit {commit[:12]}, as SWE-bench's environment reads them: "
            f"{', '.join(changed)} differ from base_commit's")
    return {**declared, **files}


def _declared_by_the_fix(split: FixSplit, log: Callable[[str], None]) -> list[str]:
    """What the fix adds to the project's declared dependencies (pylint 4661's `appdirs>=1.4.0` in setup.cfg).
    SWE-bench's records pass in its environment, where such a distribution was there by another way (an
    environment commit after the fix, a tool's dependency); the task's image has it as a dependency."""
    fixed = {p: e for p, e in {**split.fixture, **split.solution}.items() if p not in split.solution_deletes}
    before = {requirement_name(r) for r in runtime_requirements(split.fixture)}
    added = [r for r in runtime_requirements(fixed) if requirement_name(r) not in before]
    if added:
        log(f"the fix declares {', '.join(added)}, which the project at base_commit does not: the task's image "
            "has it too, as SWE-bench's environment had")
    return added


def _faithful_ids(folder: Path, split: FixSplit, passing: list[str], failing: list[str], installed: list[str] | None,
                  backend: str, image: str, log: Callable[[str], None]
                  ) -> tuple[list[str], list[str], Counted, list[str]]:
    """The instance's node ids as the task image's pytest names them, how many of each list run (are
    not skipped) on the solution, and a note for each list some of whose tests skip there; UserError
    naming the ids that match no test."""
    tested = {**split.fixture, **split.holdout}
    files = list(dict.fromkeys(i.split("::", 1)[0] for i in failing + passing))
    when = (datetime.datetime.now(), datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None))
    collected, ran, tail, failed = collected_ids(folder, split.holdout, _command(tested, files, installed),
                                                 backend, image, log)
    result, counts, notes, skips = [], [], [], []
    for field, ids in (("FAIL_TO_PASS", failing), ("PASS_TO_PASS", passing)):
        mapped, missing = match_ids(ids, collected, claimed=[i for i in failing + passing if i not in ids])
        if missing:
            raise not_found_error(missing, collected, field, why=tail)
        for given, found in mapped.items():
            if found != [given]:
                log(f"node id {_capped(given, 200)} is {_capped(', '.join(found), 300)} under the task image's pytest")
        # In the order the project's pytest collects them, as SWE-bench runs them (whole files): a dataset
        # lists its ids sorted, and a suite whose tests leave state behind fails in another order (pydicom).
        named = in_collected_order([found for i in ids for found in mapped[i]], collected)
        named = with_whole_tests(named, collected, {c for c in named if any(holds_the_clock(c, t) for t in when)})
        named, offline, drawn = _passing_on_the_fix(field, named, failed, len(collected),
                                                    fonts=_MATPLOTLIB_FONTS if _system_freetype(split) else "")
        if offline:  # a few of PASS_TO_PASS, for want of the network alone: left out, and said
            notes.append(f"{field}: {len(offline)} of its tests left out, which fail on the solution in the sandbox "
                         f"for want of the network ({_capped(', '.join(offline), 300)}): "
                         f"{_hosts(offline, failed)}, which the sandbox does not have")
            log(notes[-1])
        if drawn:  # a few of PASS_TO_PASS whose baseline images hold text drawn by another FreeType
            notes.append(f"{field}: {len(drawn)} of its tests left out, whose image comparisons fail on the solution "
                         f"in the task's image ({_capped(', '.join(drawn), 300)}): {_MATPLOTLIB_FONTS}")
            log(notes[-1])
        counts.append(sum(i in ran for i in named))
        if named and not counts[-1]:
            raise UserError(f"field `{field}`: every one of its tests is skipped on the solution in the task's "
                            f"image: {_capped(tail, 400)}")
        skipped = [i for i in named if i not in ran]
        skips.append(len(skipped))
        if skipped:  # min_tests counts what runs: said, never set below the list silently
            notes.append(f"{field}: min_tests is {counts[-1]} of its {len(named)} tests: {len(skipped)} skip on the "
                         f"solution in the task's image ({_capped(', '.join(skipped[:5]), 300)}"
                         f"{', ...' if len(skipped) > 5 else ''}): a package or resource they need is not there")
            log(notes[-1])
        if field == "PASS_TO_PASS":  # listed apart from the files its command runs (`_task_toml`)
            result.append(named)
            continue
        # A file all of whose tests are named is run as the file: thousands of ids overrun a command.
        targets = whole_files(named, collected)
        if len(_command(tested, targets, installed)) > COMMAND_MAX:
            raise UserError(f"field `{field}`: its {len(named)} node id(s) make a test command longer than the "
                            f"{COMMAND_MAX // 1024} KiB a sandbox command can be, even with whole files named once")
        result.append(targets)
    return result[1], result[0], Counted(counts[1], counts[0], skips[0]), notes


#: Why a matplotlib image comparison can fail on the gold patch in a task's image and not in SWE-bench's.
_MATPLOTLIB_FONTS = ("matplotlib's baseline images draw their text with the FreeType 2.6.1 its build downloads; the "
                     "task image's build has no network and links Debian's FreeType, whose glyphs differ")


def _system_freetype(split: FixSplit) -> bool:
    """Whether the task's image builds matplotlib against the system's FreeType (`_build.build_products`)."""
    return builds_matplotlib(split.fixture)


def _passing_on_the_fix(field: str, named: list[str], failed: dict[str, str], ran: int, fonts: str = ""
                        ) -> tuple[list[str], list[str], list[str]]:
    """(`named` less the tests of PASS_TO_PASS left out, those left out for needing the network, those left
    out for an image comparison that `fonts` explains), where none of `named` fails on the solution in the
    counting run (`failed`: id -> what was raised) but a few of PASS_TO_PASS (`_few_of` it, or `few_enough` of
    the `ran`; with image comparisons that `fonts` explains, fewer than a quarter of `named` in all) that fail only
    for want of the network, or (with `fonts`) only by an image comparison; else a UserError
    in one line naming the first test that fails and why: it needs the network, which no fix can give it,
    or the line its report says was raised (an environment that is not SWE-bench's)."""
    failing = [i for i in named if i in failed]
    hosts = {i: network_host(failed[i]) for i in failing}
    offline = [i for i in failing if hosts[i] is not None]
    drawn = [i for i in failing if hosts[i] is None and fonts and "ImageComparisonFailure" in failed[i]]
    other = [i for i in failing if hosts[i] is None and i not in drawn]
    if other:
        more = f" (and {len(other) - 1} more)" if len(other) > 1 else ""
        raise UserError(f"field `{field}`: the gold patch fails {other[0]}{more} in the task's image: "
                        f"{_capped(error_line(failed[other[0]]) or 'its report says no more', 300)}")
    left = len(offline) + len(drawn)
    few = _few_of(left, len(named)) or few_enough(left, ran)
    if drawn and not few:  # one cause, said: image comparisons with text (matplotlib 20859: 16 of 88), fewer than a
        few = 4 * left < len(named) and (_few_of(len(offline), len(named)) or few_enough(len(offline), ran))  # quarter
    if offline and (field != "PASS_TO_PASS" or not few):
        raise UserError(needs_the_network(offline[0], hosts[offline[0]] or "", len(offline) - 1, field))
    if drawn and (field != "PASS_TO_PASS" or not few):
        more = f" (and {len(drawn) - 1} more)" if len(drawn) > 1 else ""
        raise UserError(f"field `{field}`: the gold patch fails {drawn[0]}{more} in the task's image, an image "
                        f"comparison: {fonts}")
    return [i for i in named if i not in offline and i not in drawn], offline, drawn


def _few_of(left_out: int, named: int) -> bool:
    """Whether `left_out` of PASS_TO_PASS's `named` tests are few enough to leave out: fewer than half of them, and
    no more than `tasks new` ever deselects. A record's tests of one small file (sphinx 8269's linkcheck tests, three
    of which reach www.google.com) are not a suite of hundreds: one per fifty run would keep none of them."""
    return left_out <= DESELECT_MAX and 2 * left_out < named


def _hosts(ids: list[str], failed: dict[str, str]) -> str:
    """`they need HOST, HOST` or `they need the network` for tests that failed for want of it."""
    hosts = list(dict.fromkeys(h for i in ids if (h := network_host(failed[i]))))
    return f"they reach {', '.join(hosts)}" if hosts else "they need the network"


def _visible_files(ids: list[str], fixture: Tree) -> list[str]:
    """The test files of `ids` the agent can see: what the reference trajectory runs last."""
    return list(dict.fromkeys(i.split("::", 1)[0] for i in ids if i.split("::", 1)[0] in fixture))


def import_swebench(source: str | Path, repos: Path | None, out: Path, *, backend: str, image: str,
                    dockerfile: Path | None = None, split: str = "test", select: Selection = Selection(),
                    images: str | None = None, log: Callable[[str], None] = lambda line: None,
                    refused: Callable[[Skipped, float], None] = lambda skipped, seconds: None,
                    jobs: int = 1) -> ImportReport:
    """Write a task per instance of `source` (a dataset file or name, `read_instances`) that `select`
    keeps under `out` (`report.made`); list the instances that cannot be made. The tasks are not
    checked here: the caller checks each and settles it with `keep_checked`. `refused` is told of each
    record not made, as it is refused, with the seconds spent on it. `jobs` instances are made side by
    side (each one's image build and counting run is mostly waiting on the engine); each log line then
    names its instance. The report is the same whatever `jobs` is.
    `dockerfile`: every task's image is built from it, as `tasks new --dockerfile` does; `images`: see write_instance."""
    repos, out = (None if repos is None else Path(repos)), Path(out)
    if images is None and (repos is None or not repos.is_dir()):
        raise UserError(f"--repos: {repos} is not a folder of clones")
    instances, skipped = read_instances(source, split, select)
    report = ImportReport(skipped=skipped, bad_input=bool(skipped))
    for bad in skipped:
        refused(bad, 0.0)

    def make(instance: Instance) -> tuple[str | EndstateError, float]:
        said = log if jobs == 1 else lambda line: log(f"[{instance.instance_id}] {line}")
        started = time.monotonic()
        try:
            folder = write_instance(instance, repos, out, said, backend=backend, image=image,
                                    own_dockerfile=dockerfile, images=images)
            said(f"wrote {folder}")
            return str(folder), time.monotonic() - started
        except EndstateError as exc:
            return exc, time.monotonic() - started

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(make, instance): (number, instance) for number, instance in instances}
        for future in concurrent.futures.as_completed(futures):
            (number, instance), (made, seconds) = futures[future], future.result()
            if isinstance(made, str):
                report.made[instance.instance_id] = (number, made)
            else:
                report.skipped.append(Skipped(number, instance.instance_id,
                                              f"instance {instance.instance_id}: {_capped(str(made), REASON_MAX)}"))
                refused(report.skipped[-1], seconds)
            report.seconds[instance.instance_id] = seconds
    report.made = dict(sorted(report.made.items(), key=lambda item: item[1][0]))
    report.seconds = {i.instance_id: report.seconds[i.instance_id] for _, i in instances}
    report.skipped.sort(key=lambda s: s.line)
    return report


def keep_checked(report: ImportReport, task_id: str, why_not: str | None) -> None:
    """A made task, checked: kept (`why_not` None), or removed and listed with why it does not check out."""
    number, folder = report.made[task_id]
    if why_not is None:
        report.written.append(task_id)
        return
    shutil.rmtree(folder, ignore_errors=True)
    report.skipped.append(Skipped(number, task_id, f"instance {task_id} does not check out: {_capped(why_not, REASON_MAX)}"))
    report.skipped.sort(key=lambda s: s.line)
