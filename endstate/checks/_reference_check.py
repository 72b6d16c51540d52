"""Does a task's reference trajectory reach its solution?

`scripted/reference` plays `reference.toml`; if that trajectory is missing, or its
edits do not add up to `solution/`, the known-fix control arm fails for reasons
that have nothing to do with the harness. `tasks check` asks here first.

Trajectories that change files only with `write_file` and `edit_file` (and run only
commands that read) are played in memory over the fixture. One whose shell
commands may write is played for real: in a fresh sandbox of the task, through
the agent's own tools and the task's permission policy, as the agent would.
"""

from __future__ import annotations

import posixpath

from endstate.agent import Policy, ToolError, extract_commands, run_tool
from endstate.sandbox import WORKDIR, FileEntry, Tree, healthy, open_sandbox, tree_hash, without_caches
from endstate.task import Task, ToolCallSpec, task_sandbox

__all__ = ["check_reference", "play_in_memory", "reads_only"]

#: Programs that never change the workspace on their own (redirections are checked apart).
_READERS = frozenset({"cat", "ls", "grep", "egrep", "fgrep", "head", "tail", "wc", "echo", "printf", "true",
                      "pwd", "sort", "uniq", "diff", "stat", "file", "tree", "cut", "nl", "cd", "test", "["})


def reads_only(command: str) -> bool:
    """True when every simple command of `command` only reads (or runs pytest, whose caches are not state)."""
    try:
        commands = extract_commands(command, WORKDIR)
    except Exception:  # too odd to follow: treat as writing, so it gets played for real
        return False
    for cmd in commands:
        if cmd.writes or not cmd.argv:
            return False
        program, args = posixpath.basename(cmd.argv[0]), cmd.argv[1:]
        runs_pytest = program in ("pytest", "py.test") or (
            program.startswith("python") and args[:2] == ("-m", "pytest"))
        finds = program == "find" and not {"-delete", "-exec", "-execdir", "-ok", "-fprint"} & set(args)
        edits = program == "sed" and any(a.startswith(("-i", "--in-place")) for a in args)
        if not (runs_pytest or finds or (program == "sed" and not edits) or program in _READERS):
            return False
    return True


def _relative(path: str) -> str | None:
    clean = posixpath.normpath(path)
    if clean.startswith(WORKDIR + "/"):
        clean = clean[len(WORKDIR) + 1:]
    if clean.startswith("/") or clean == ".." or clean.startswith("../"):
        return None
    return clean


def play_in_memory(calls: list[ToolCallSpec], fixture: Tree, policy: Policy) -> tuple[Tree, list[str]]:
    """The tree `calls` leave when laid over `fixture`, plus what went wrong on the way."""
    tree, problems = dict(fixture), []
    for number, call in enumerate(calls, start=1):
        if not policy.check(call.tool, call.args).allowed or call.tool in ("bash", "read_file"):
            continue
        path = _relative(str(call.args.get("path", "")))
        if path is None:
            problems.append(f"call {number} ({call.tool}) names a path outside the workspace")
            continue
        if call.tool == "write_file":
            mode = tree[path].mode if path in tree else 0o644
            tree[path] = FileEntry(mode, str(call.args.get("content", "")).encode("utf-8"))
        elif call.tool == "edit_file":
            old, new = str(call.args.get("old", "")), str(call.args.get("new", ""))
            text = tree[path].data.decode("utf-8", errors="replace") if path in tree else None
            count = text.count(old) if text is not None and old else 0
            if count != 1:
                problems.append(f"call {number} (edit_file {path}): `old` occurs {count} times, not once")
                continue
            tree[path] = FileEntry(tree[path].mode, text.replace(old, new, 1).encode("utf-8"))
        else:
            problems.append(f"call {number}: unknown tool {call.tool!r}")
    return tree, problems


def _play_live(task: Task, calls: list[ToolCallSpec], policy: Policy, backend: str, image: str) -> tuple[Tree, list[str]]:
    where = task_sandbox(task, backend, image)
    problems = []
    with open_sandbox(backend, image=where.image, limits=where.limits, name_hint=f"reference-{task.id}") as box:
        box.put_tree(task.fixture())
        if task.manifest.sandbox.healthcheck is not None:
            healthy(box, task.manifest.sandbox.healthcheck)
        for number, call in enumerate(calls, start=1):
            if not policy.check(call.tool, call.args).allowed:
                continue
            try:
                run_tool(box, call.tool, dict(call.args), timeout=where.limits.command_timeout_s)
            except ToolError as exc:
                problems.append(f"call {number} ({call.tool}): {exc}")
        return without_caches(box.get_tree()), problems


def check_reference(task: Task, backend: str, image: str) -> tuple[str, bool, str]:
    """(outcome, ok, note) for the task check's `reference` row."""
    if not task.has_trajectory("reference"):
        return ("missing", False, "no reference.toml: the known-fix arm (scripted/reference) would have nothing "
                "to play; write the trajectory that reaches solution/ ([[steps]] of tool calls: bash, read_file, write_file, edit_file)")
    calls = [call for step in task.reference().steps for call in step.calls]
    policy = Policy.load(*([task.manifest.policy] if task.manifest.policy else []))
    writes = [call for call in calls if call.tool == "bash" and policy.check(call.tool, call.args).allowed
              and not reads_only(str(call.args.get("command", "")))]
    if not writes:
        tree, problems = play_in_memory(calls, task.fixture(), policy)
        how = "played in memory"
    else:
        tree, problems = _play_live(task, calls, policy, backend, image)
        how = "played in a sandbox (its commands write)"
    solution = task.solution()
    if tree_hash(tree) == tree_hash(solution):
        return "solution", True, ""
    differ = sorted(p for p in set(tree) | set(solution) if tree.get(p) != solution.get(p)
                    and not (p in tree and p in solution and tree[p].data == solution[p].data
                             and (tree[p].mode & 0o111 != 0) == (solution[p].mode & 0o111 != 0)))
    note = f"{how}, the reference trajectory ends with {', '.join(differ[:5])} unlike solution/"
    return "differs", False, note + (f" ({problems[0]})" if problems else "")
