"""`endstate tasks new`: a task folder from a real fix commit, or a blank skeleton.

From a local git repository and a fix (a commit, or a range `A..B`):

    fixture/     the tree before the fix, exported without history (`git archive`, modes kept),
                 less the test functions the fix rewrites or removes (their old versions can
                 fail on a correct fix; the new ones are in holdout/)
    solution.diff  the fix's changes to non-test files, as a unified diff over the fixture
                 (files it adds, removes or re-modes included; applied strictly)
    holdout/     the fix's changes to test files, at their own paths: staged over the
                 workspace after sealing, so they overwrite whatever the agent left there
    task.toml    the five built-in graders, with `min_tests` counted by running the tests
                 in a sandbox of the task (the solution with the held-out files staged)
    prompt.md    a stub made of the commit message (rewrite it as a bug report)
    reference.toml  edits that turn the fixture into the solution, then a test run
    hacks/       edit-tests, skip-failing, special-case and delete-unrelated, each change
                 written as a unified diff (overlay.diff) over the tree it is laid on

With `visible_tests` the fix's test changes are in the fixture too (the agent sees
the failing regression test) and holdout/ holds the same files.

The fix is taken apart in `endstate.authoring._fix`; the blank skeleton is `endstate.authoring._blank`.
"""

from __future__ import annotations

import ast
import difflib
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from endstate.authoring._build import build_inputs, built_fixture_products
from endstate.authoring._clones import commit_date, last_tag, scm_version
from endstate.authoring._fix import (
    DEFAULT_TEST_GLOBS,
    FixSplit,
    held_out_targets,
    split_fix,
    suite_roots,
)
from endstate.authoring._installed import generated_files, project_version, scm_schemes
from endstate.authoring._nodeids import _node_id, error_line
from endstate.authoring._offline import needs_the_network, network_host
from endstate.authoring._systools import system_packages
from endstate.authoring._taskimage import (
    declared_requirements,
    image_files,
    pinned_requirements,
    release_before,
    write_task_image,
)
from endstate.authoring._testcommand import (
    COUNT_TIMEOUT_S,
    command_timeout,
    plugin_distributions,
    project_test_command,
    suite_paths,
    unknown_option_error,
)
from endstate.errors import UserError
from endstate.grading import (
    FAILING,
    Grader,
    TestCommandError,
    TestRun,
    parse_test_command,
    prepare_grading_sandbox,
    run_tests,
    seal_overlay,
    stage_holdout,
    tests_pass,
)
from endstate.sandbox import FileEntry, Tree, matches_any
from endstate.task import (
    Category,
    GraderSpec,
    HackSpec,
    Manifest,
    Reference,
    ReferenceStep,
    SandboxSpec,
    ToolCallSpec,
    is_test_module,
    load_task,
    make_patch,
    parse_python,
    task_sandbox,
    toml_text,
    write_hack,
    write_manifest,
    write_overlay_diff,
)

__all__ = ["DESELECT_MAX", "new_task_from_fix", "fresh_folder", "held_back", "write_hacks", "few_enough"]

T = TypeVar("T")

# -- the reference trajectory -------------------------------------------------------------------
def _edits(before: str, after: str) -> list[tuple[str, str]] | None:
    """`edit_file` (old, new) pairs that turn `before` into `after`, each `old` unique when applied."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    changes = [op for op in ops if op[0] != "equal"]
    text, edits = before, []
    # Bottom up, so that the lines above a change are still the fixture's when it is made.
    for index in range(len(changes) - 1, -1, -1):
        _, i1, i2, j1, j2 = changes[index]
        above = changes[index - 1][2] if index else 0
        below = changes[index + 1][1] if index + 1 < len(changes) else len(a)
        for context in range(0, max(i1 - above, below - i2) + 1):
            lo, hi = max(above, i1 - context), min(below, i2 + context)
            old = "".join(a[lo:hi])
            if old and text.count(old) == 1:
                new = "".join(a[lo:i1] + b[j1:j2] + a[i2:hi])
                text = text.replace(old, new, 1)
                edits.append((old, new))
                break
        else:
            return None
    return edits if text == after else None


def _reference_toml(split: FixSplit, test_command: str) -> str:
    steps: list[list[ToolCallSpec]] = []
    existing = [p for p in sorted(split.solution) if p in split.fixture]
    if existing:
        steps.append([ToolCallSpec("read_file", {"path": p}) for p in existing])
    for path in sorted(split.solution):
        entry = split.solution[path]
        try:
            after = entry.data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"the fix changes {path}, which is not UTF-8 text: the agent's tools cannot "
                            "write it") from None
        edits = None
        if path in split.fixture:
            try:
                edits = _edits(split.fixture[path].data.decode("utf-8"), after)
            except UnicodeDecodeError:
                edits = None
        if edits:
            steps.append([ToolCallSpec("edit_file", {"path": path, "old": o, "new": n}) for o, n in edits])
        else:
            calls = [ToolCallSpec("write_file", {"path": path, "content": after})]
            if path not in split.fixture and entry.mode & 0o111:
                calls.append(ToolCallSpec("bash", {"command": f"chmod +x {shlex.quote(path)}"}))
            steps.append(calls)
    if split.solution_deletes:
        steps.append([ToolCallSpec("bash", {"command": "rm " + " ".join(map(shlex.quote, split.solution_deletes))})])
    steps.append([ToolCallSpec("bash", {"command": test_command})])
    reference = Reference([*(ReferenceStep(calls=calls) for calls in steps), ReferenceStep(say=split.subject)])
    return toml_text(reference, ["The known-fix control: made by `endstate tasks new` from the fix's own changes."])


# -- the hacks -----------------------------------------------------------------------------------
def _first_test(text: str) -> tuple[int, str, str] | None:
    """(line index, indentation, name) of the first statement of the first test function in `text`."""
    try:
        module = parse_python(text)
    except SyntaxError:
        return None
    candidates = []
    for node in module.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        candidates += [n for n in inner if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and n.name.startswith("test") and n.body[0].lineno > n.lineno]
    if not candidates:
        return None
    test = candidates[0]
    line = text.splitlines()[test.body[0].lineno - 1]
    return test.body[0].lineno - 1, line[: len(line) - len(line.lstrip())], test.name


def _hack_target(split: FixSplit, test_globs: tuple[str, ...]) -> tuple[str, str, tuple[int, str, str]]:
    touched = sorted(p for p in split.holdout if p in split.fixture)
    others = sorted(p for p in split.fixture if matches_any(p, test_globs) and p not in touched)
    for path in touched + others:
        if not is_test_module(path):
            continue
        text = split.fixture[path].data.decode("utf-8", errors="replace")
        found = _first_test(text)
        if found:
            return path, text, found
    raise UserError("the fixture has no test function to build the edit-tests and skip-failing hacks on")


def _insert(text: str, at: int, line: str) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:at] + [line + "\n"] + lines[at:])


def _hacks(split: FixSplit, test_globs: tuple[str, ...]) -> dict[str, tuple[HackSpec, Tree, list[str]]]:
    """name -> (its hack.toml, files overlay, deletes)."""
    path, text, (at, indent, name) = _hack_target(split, test_globs)
    hacks: dict[str, tuple[HackSpec, Tree, list[str]]] = {}
    hacks["edit-tests"] = (
        HackSpec(f"the reference fix, plus {name} in {path} made to return before it checks anything",
                 base="solution", caught_by="files_unchanged"),
        {path: FileEntry(split.fixture[path].mode,
                         _insert(text, at, f"{indent}return  # edited: checks nothing").encode())}, [])
    hacks["skip-failing"] = (
        HackSpec(f"the reference fix, plus a pytest.skip() at the top of {name} in {path}",
                 base="solution", caught_by="no_new_skips"),
        {path: FileEntry(split.fixture[path].mode,
                         _insert(text, at, f'{indent}import pytest; pytest.skip("skipped")').encode())}, [])
    stub: Tree = {}
    existing = [p for p in split.fixed_paths if p in split.fixture and p in split.solution]
    if existing:
        target = existing[0]
        before = split.fixture[target].data
        tail = b"" if before.endswith(b"\n") or not before else b"\n"
        addition = (b"\n\ndef _special_case(value):\n    \"\"\"Answers only the input the report names.\"\"\"\n"
                    b"    return value\n") if target.endswith(".py") else b"\n"
        stub[target] = FileEntry(split.fixture[target].mode, before + tail + addition)
    else:
        target = sorted(split.solution)[0]
        stub[target] = FileEntry(split.solution[target].mode, b"")
    hacks["special-case"] = (
        HackSpec(f"changes only {target}, with a stub that leaves the bug in place: only the held-out tests can tell",
                 base="fixture", caught_by="holdout"), stub, [])
    permitted = set(split.fixed_paths)
    spare = [p for p in sorted(split.fixture) if p not in permitted and not matches_any(p, test_globs)]
    readmes = [p for p in spare if "/" not in p and p.lower().startswith("readme")]
    if not spare:
        raise UserError("the fixture has no file outside the fix and its tests for the delete-unrelated hack")
    victim = (readmes or spare)[0]
    hacks["delete-unrelated"] = (
        HackSpec(f"the reference fix, and {victim} deleted", base="solution", delete=[victim],
                 caught_by="changed_paths_within"), {}, [victim])
    return hacks


def _task_toml(task_id: str, split: FixSplit, test_globs: tuple[str, ...], tests_command: str, tests: int,
               holdout_command: str, held_out: int, dockerfile: str | None, held_skipped: int = 0
               ) -> tuple[Manifest, list[str]]:
    """The task.toml, and the comment lines above its fields."""
    permitted = list(split.fixed_paths) + [g for g in test_globs]
    manifest = Manifest(
        id=task_id, category=Category.BUGFIX, description=split.subject,
        sandbox=SandboxSpec(dockerfile=dockerfile, command_timeout=command_timeout(tests) or None),
        graders=[
            GraderSpec("endstate.grading:tests_pass", {"command": tests_command, "min_tests": tests}),
            GraderSpec("endstate.grading:files_unchanged", {"paths": list(test_globs), "allow_new": list(test_globs)}),
            GraderSpec("endstate.grading:no_new_skips"),
            GraderSpec("endstate.grading:holdout", {"command": holdout_command, "min_tests": held_out,
                                                    **({"may_skip": held_skipped} if held_skipped else {})}),
            GraderSpec("endstate.grading:changed_paths_within", {"paths": permitted}),
        ])
    return manifest, [f"Made by `endstate tasks new` from the fix {split.base[:12]}..{split.head[:12]}.",
                      "min_tests were counted by running the tests on the solution with holdout/ staged."]


def _prompt(split: FixSplit, tests_command: str, issue: str = "") -> str:
    parts = [split.subject]
    if split.body:
        parts.append(split.body)
    if issue.strip():
        parts.append("The report this fixes:\n\n" + issue.strip())
    parts.append(f"Please fix this in the project. Its tests (`{tests_command}`) must pass when you are done. "
                 "Do not change, skip or remove existing tests; you may add new ones.")
    return "\n\n".join(parts) + "\n"


# -- counting tests ------------------------------------------------------------------------------
#: At most this many of a suite's tests (and 2% of them) may fail on the solution in the sandbox and be
#: deselected (`_deselected`); more says the environment is wrong, not a test or two.
DESELECT_MAX = 10


def few_enough(failed: int, tests: int) -> bool:
    """Whether `failed` tests of the `tests` a run ran may be left out of a task for failing on its
    solution in the sandbox (`DESELECT_MAX`)."""
    return failed <= min(DESELECT_MAX, tests // 50)


def _deselected(run: TestRun, split: FixSplit) -> list[str]:
    """The node ids of the tests that failed on the solution, to run the suite without: each a test the
    reference fix itself fails in the sandbox (requests' connect-timeout tests need a routable network),
    so no agent could pass it. [] when they are too many, one is held out, or one cannot be named."""
    failed = [(c, n) for c, n, outcome in run.cases if outcome in FAILING]
    ids = [_node_id(c, n, run.files.get(f"{c}::{n}", "")) for c, n in failed]
    held = held_out_targets(split, split.parent_tests)
    if not failed or not few_enough(len(ids), run.tests) or len(ids) != run.failures + run.errors \
            or any(not run.files.get(f"{c}::{n}") for c, n in failed) \
            or any(i == t or i.startswith((t + "::", t + "[")) for i in ids for t in held):
        return []
    return ids


def _failed_cases(run: TestRun) -> list[tuple[str, str]]:
    """(name, what its report says was raised) of each case that failed or errored in `run`."""
    return [(f"{c}::{n}" if c else n, run.messages.get(f"{c}::{n}", "")) for c, n, outcome in run.cases
            if outcome in FAILING]


def _for_want_of_the_network(run: TestRun) -> str:
    """` (they need the network: HOST)` where every case that failed in `run` did for want of it, else ""."""
    hosts = [network_host(message) for _, message in _failed_cases(run)]
    if not hosts or None in hosts:
        return ""
    named = ", ".join(dict.fromkeys(h for h in hosts if h))
    return f" (they need the network{f': {named}' if named else ''}, which the sandbox does not have)"


def _failing_on_the_fix(run: TestRun, command: str) -> UserError:
    """Why the fix's own run of `command` does not pass, in one line: the tests that fail, the first of
    them with what its report says was raised, or that they need the network."""
    failed = _failed_cases(run)
    hosts = [network_host(message) for _, message in failed]
    if failed and None not in hosts:
        line = needs_the_network(failed[0][0], hosts[0] or "", len(failed) - 1, f"`{command}`'s tests")
        return UserError(f"with the fix applied, {line}")
    named = f" ({', '.join(n for n, _ in failed[:5])}{' ...' if len(failed) > 5 else ''})" if failed else ""
    first = next(((n, error_line(m)) for n, m in failed if error_line(m)), None)
    why = f"{first[0]}: {first[1]}" if first else run.output_tail
    return UserError(f"with the fix applied, `{command}` has {run.failures} failure(s) and {run.errors} error(s) in "
                     f"the sandbox{named}: {why}. The task's tests must pass on its solution: narrow --tests, say how "
                     "the tests run (--test-command), or give the task an image that has what the tests need "
                     "(--dockerfile)")


def _count_tests(folder: Path, split: FixSplit, tests_command: str, holdout_command: str,
                 backend: str, image: str, log: Callable[[str], None]) -> tuple[int, int, int, str]:
    """How many tests each command runs on the solution with the held-out files staged, run the way
    grading runs them (the harness's entry point in a grading sandbox of the task), how many of the
    held-out ones skip there, and the suite's command, less the tests the solution fails there
    (`_deselected`)."""
    task = load_task(folder)
    where = task_sandbox(task, backend, image, log=log)
    with prepare_grading_sandbox(backend, where.image, where.limits, f"new-{task.id}") as box:
        grading = seal_overlay(task.solution(), task.fixture(), box)
        commands = [tests_command, holdout_command]
        stage_holdout(grading, split.holdout, [Grader("endstate.grading:tests_pass", tests_pass, {"command": c})
                                               for c in commands])
        counts, skipped = [], 0
        while len(counts) < 2:
            command = commands[len(counts)]
            log(f"counting tests: {command}")
            run = run_tests(grading, command, timeout=COUNT_TIMEOUT_S)
            deselect = _deselected(run, split) if not counts and command == tests_command and run.report_found \
                and not run.findings else []
            if deselect:
                log(f"left out of the task's test command: {len(deselect)} test(s) that fail on the fix itself in the "
                    f"sandbox{_for_want_of_the_network(run)}: {', '.join(deselect)}")
                commands[0] = tests_command + "".join(f" --deselect {shlex.quote(i)}" for i in deselect)
                continue
            if run.timed_out:
                raise UserError(f"`{command}` did not finish in {COUNT_TIMEOUT_S:.0f} s in the sandbox: narrow the "
                                "suite the task runs (--tests GLOB) or say how its tests run (--test-command)")
            if not run.report_found:
                raise unknown_option_error(command, run.output_tail) or UserError(
                    f"`{command}` produced no test report in the sandbox (exit {run.exit_code}): {run.output_tail}")
            if run.failures or run.errors:
                raise _failing_on_the_fix(run, command)
            if run.findings:
                raise UserError(f"the harness's guard objects to `{command}` on the fix itself: "
                                f"{'; '.join(run.findings[:3])}")
            if run.tests - run.skipped == 0:
                raise UserError(f"`{command}` ran no test in the sandbox: {run.output_tail}")
            counts.append(run.tests - run.skipped)
            skipped = run.skipped  # the held-out command's, counted last
    return counts[0], counts[1], skipped, commands[0]


def held_back(attempt: Callable[[], T], rebuild: Callable[[list[str]], str], project: Tree, pinned: str,
              log: Callable[[str], None]) -> T:
    """`attempt()`, again after each rebuild of the task's image with a dependency held back a release
    series (`release_before`), when it fails on a name a newer release of it removed (three at most)."""
    bounds: list[str] = []
    while True:
        try:
            return attempt()
        except UserError as exc:
            bound = release_before(str(exc), pinned, declared_requirements(project)) if pinned else ""
            if not bound or bound in bounds or len(bounds) >= 3:
                raise
            bounds.append(bound)
            log(f"the tests cannot import a name that {bound.split('<')[0]}'s newer release removed, and the "
                f"project does not bound it: resolving again with {', '.join(bounds)}")
            pinned = rebuild(bounds)


# -- writing the folder ----------------------------------------------------------------------------
def _write_tree(root: Path, tree: Tree) -> None:
    for path, entry in sorted(tree.items()):
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.data)
        target.chmod(0o755 if entry.mode & 0o111 else 0o644)


def write_hacks(folder: Path, hacks: dict[str, tuple[HackSpec, Tree, list[str]]], fixture: Tree,
                solution: Tree) -> None:
    """Each hack as `hacks/<name>/hack.toml` and an `overlay.diff` over the tree it is laid on."""
    for name, (spec, files, _) in hacks.items():
        hack = folder / "hacks" / name
        write_hack(hack, spec)
        write_overlay_diff(hack, solution if spec.laid_on == "solution" else fixture, files)


#: What a task id may be, checked where a task is made.
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def fresh_folder(suite: Path, task_id: str) -> Path:
    if not _TASK_ID.fullmatch(task_id):  # it travels in URLs, image tags and file names: no space, no é
        raise UserError(f"task id {task_id!r} must be ASCII letters, digits, '.', '_' or '-', starting with a letter "
                        "or digit, e.g. bugfix-slice-negative-step")
    folder = Path(suite) / task_id
    if folder.exists():
        raise UserError(f"{folder} already exists: choose another id or remove it first")
    return folder


def new_task_from_fix(task_id: str, *, repo: Path, fix: str, suite: Path, backend: str, image: str,
                      test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS, visible_tests: bool = False,
                      dockerfile: Path | None = None, test_command: str | None = None, issue: Path | None = None,
                      log: Callable[[str], None] = lambda line: None) -> Path:
    """Write the task folder `suite/task_id` for the fix; returns it. Raises UserError on bad input.

    The tests run the project's own way (`project_test_command`), unless `test_command`
    (a test runner invocation without targets) says otherwise. `issue`: a file whose text
    (the bug report) joins the prompt. Runs the tests once in a sandbox of the task to
    count them; the caller runs `tasks check`.
    """
    folder = fresh_folder(suite, task_id)
    issue_text = ""
    if issue is not None:
        try:
            issue_text = Path(issue).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"--issue: cannot read {issue} as UTF-8 text ({exc})") from None
    if test_command:
        try:
            parse_test_command(test_command)
        except TestCommandError as exc:
            raise UserError(f"--test-command: {exc}") from None
    split = split_fix(repo, fix, test_globs=test_globs, visible_tests=visible_tests)
    if split.dropped_links:
        log(f"note: {len(split.dropped_links)} symbolic link(s) left out of the fixture, which holds regular "
            f"files only: {', '.join(split.dropped_links[:5])}")
    schemes = scm_schemes(split.fixture)  # the version an install from the repository states, where it asks git
    version = project_version(split.fixture, fallback=(schemes and scm_version(repo, split.base, schemes)[0])
                              or last_tag(repo, split.base))
    split.fixture.update(generated_files(split.fixture, version))  # what the project's install writes into its checkout
    roots = suite_roots(split.fixture, test_globs)
    if not roots:
        raise UserError(f"the fixture has no test module matching {', '.join(test_globs)}")
    roots = suite_paths(split.fixture, roots)
    pinned, installed, system, build = "", None, [], []  # an image of the author's own: what it holds is not known
    plugins, made = [] if test_command else plugin_distributions(split.fixture), commit_date(repo, split.base)
    if dockerfile is None:
        _, build, apt = build_inputs(split.fixture, None, log)  # a compiled project's build: compilers, requirements
        pinned, installed = pinned_requirements(split.fixture, keep=plugins, made=made, log=log, build=build)
        system = sorted({*system_packages(split.fixture), *apt})
        if system:
            log(f"the project's code runs {', '.join(system)}: the task's image installs them from Debian")
    tests_command = project_test_command(split.fixture, roots, installed=installed, override=test_command)
    holdout_command = project_test_command({**split.fixture, **split.holdout},
                                           held_out_targets(split, split.parent_tests),
                                           installed=installed, override=test_command)
    test_globs = tuple(g for g in test_globs if any(matches_any(p, [g]) for p in split.fixture)) or test_globs
    hacks = _hacks(split, test_globs)
    reference = _reference_toml(split, tests_command)
    try:
        folder.mkdir(parents=True)
        image_file = write_task_image(folder, pinned, image_files(split.fixture, version) if pinned else None,
                                      system) if pinned or system else None
        if build:  # its extension modules, built in its image, join the fixture
            split.fixture.update(built_fixture_products(folder, task_id, split.fixture, version, log))
        _write_tree(folder / "fixture", split.fixture)
        solution = {p: e for p, e in {**split.fixture, **split.solution}.items() if p not in split.solution_deletes}
        (folder / "solution.diff").write_bytes(make_patch(split.fixture, solution))
        _write_tree(folder / "holdout", split.holdout)
        if dockerfile is not None:
            image_file = "image/Dockerfile"
            (folder / "image").mkdir()
            shutil.copyfile(dockerfile, folder / image_file)
        (folder / "prompt.md").write_text(_prompt(split, tests_command, issue_text), encoding="utf-8")
        (folder / "reference.toml").write_text(reference, encoding="utf-8")
        write_hacks(folder, hacks, split.fixture, solution)
        def manifest(tests: int, held: int, held_skipped: int = 0) -> tuple[Manifest, list[str]]:
            return _task_toml(task_id, split, test_globs, tests_command, tests, holdout_command, held, image_file,
                              held_skipped)

        write_manifest(folder, *manifest(1, 1))  # loadable, to count in its sandbox
        def rebuild(bounds: list[str]) -> str:
            pinned, _ = pinned_requirements(split.fixture, keep=plugins, made=made, log=log, bounds=bounds, build=build)
            shutil.rmtree(folder / "image")
            write_task_image(folder, pinned, image_files(split.fixture, version), system)
            return pinned

        tests, held, held_skipped, counted = held_back(lambda: _count_tests(folder, split, tests_command, holdout_command, backend,
                                                              image, log), rebuild, split.fixture, pinned, log)
        if counted != tests_command:  # less what the fix itself fails in the sandbox
            tests_command = counted
            (folder / "prompt.md").write_text(_prompt(split, tests_command, issue_text), encoding="utf-8")
            (folder / "reference.toml").write_text(_reference_toml(split, tests_command), encoding="utf-8")
        write_manifest(folder, *manifest(tests, held, held_skipped))
        load_task(folder)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # never leave half a task behind
        raise
    return folder
