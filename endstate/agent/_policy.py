"""The permission policy: every tool call is checked before it runs.

Rules are data (the package's `policy.toml`, a task's `[policy]` table, a user's
file) and are matched against *parsed* commands, never against substrings: a bash
command is broken into simple commands by `endstate.agent._shell`, which follows
pipes, substitutions, `bash -c` strings, wrappers such as `sudo` and inline
`python -c` code. `echo "rm -rf x"` is therefore an echo, while `echo $(rm -rf x)`
contains an rm.

The file tools take part as pseudo-commands (`write_file PATH`, `read_file PATH`,
`edit_file PATH`), so the same rules cover them.

Paths are resolved against the workspace and any `cd` seen earlier in the same
command. A path that cannot be known before the command runs (`$DIR/x`) does not
match a path rule: the policy denies what it can show is harmful, and says why.
`~` and `$HOME` resolve to /root, the sandbox user's home.
"""

from __future__ import annotations

import fnmatch
import posixpath
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import msgspec

from endstate.agent._commands import MAX_NESTING, NestingTooDeep, SimpleCommand, has_flag, resolve_path, split_args
from endstate.agent._shell import extract_commands
from endstate.errors import PolicyError, strict_message

__all__ = [
    "Decision",
    "Policy",
    "PolicyError",
    "PolicySource",
    "Rule",
    "CommandRule",
    "PythonRule",
    "WriteRule",
    "ReadRule",
    "Writer",
]


class Decision(msgspec.Struct, frozen=True):
    """The verdict on one tool call. `reason` is written for the model to read."""

    allowed: bool
    rule: str = ""
    reason: str = ""


_ALLOW = Decision(allowed=True)


# --------------------------------------------------------------------------- schema


class _RuleBase(msgspec.Struct, forbid_unknown_fields=True, frozen=True, tag_field="kind"):
    #: Unique name; overrides disable or replace a rule by it.
    name: str
    #: Completes "`<command>` ..." in the denial the model reads.
    reason: str

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("a rule needs a non-empty `name`")


class CommandRule(_RuleBase, tag="command"):
    """Denies a simple command by its program, subcommand, flags and operands.

    Every constraint given must hold; within one list any entry is enough.
    """

    #: Glob patterns for the program's base name (`/bin/rm` is `rm`).
    program: list[str]
    #: Leading positional words, e.g. "push" or "reflog expire" for git.
    subcommand: list[str] = []
    #: Any of these flags present. Short flags match inside clusters (`-r` in `-rf`),
    #: long flags match `--flag=value` and getopt abbreviations (`--recur`).
    flags_any: list[str] = []
    #: None of these flags present (dry runs, `--abort`).
    unless_flags: list[str] = []
    #: Glob patterns, any of which an operand matches; `[*]` is a literal star.
    args_any: list[str] = []
    #: Only when started through one of these programs (`find -exec`, `xargs`, `sudo`).
    launched_by: list[str] = []

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.program:
            raise ValueError(f"rule {self.name!r}: `program` must list at least one pattern")


class PythonRule(_RuleBase, tag="python"):
    """Denies inline Python (`python -c CODE`, a here-document) that names any of `names_any`."""

    names_any: list[str]


class Writer(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """How one family of programs names the files it writes."""

    program: list[str]
    #: Which operands are written: all of them, the last of two or more, or none.
    target: Literal["operands", "last", "none"] = "operands"
    #: Only operands with this prefix count, the prefix removed (`of=` for dd).
    prefix: str = ""
    #: Options whose value is a written path (`-t DIR`, `-o FILE`).
    options: list[str] = []
    #: Only when one of these flags is present (`sed -i`).
    flags_any: list[str] = []
    #: Options that carry the program's script; when none is given the first
    #: operand is the script, not a path (`sed 's/a/b/' f`, `sed -e 's/a/b/' f`).
    script_options: list[str] = []


class WriteRule(_RuleBase, tag="write"):
    """Denies writing outside the workspace.

    Written paths come from output redirections, the file tools, and `writers`.
    `reason` may use `{path}` and `{workdir}`.
    """

    #: Paths outside the workspace that may still be written (each with what is below it).
    allow: list[str] = []
    writers: list[Writer] = []


class ReadRule(_RuleBase, tag="read"):
    """Denies reading files that look like credentials.

    Read paths come from `read_file`, input redirections and the operands of
    `readers`. A pattern with no `/` matches the base name; one starting with `/`
    the whole path; any other the end of the path. `reason` may use `{path}`.
    """

    paths: list[str]
    #: Base-name or path patterns exempt from `paths` (`.env.example`).
    allow: list[str] = []
    #: Program patterns whose operands are read.
    readers: list[str] = []


Rule = CommandRule | PythonRule | WriteRule | ReadRule


class PolicySource(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One layer of policy: `policy.toml`, a task's `[policy]` table or a user's file."""

    rule: list[Rule] = []
    #: Names of rules from earlier layers to switch off.
    disable: list[str] = []


# --------------------------------------------------------------------------- matching


# Options before a git subcommand that take a value.
_GLOBAL_VALUE_OPTIONS: Mapping[str, frozenset[str]] = {
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                      "--super-prefix"}),
}


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _subcommand_args(cmd: SimpleCommand, rule: CommandRule) -> tuple[str, ...] | None:
    """The arguments after the rule's subcommand, or None if the command has another."""
    args = cmd.argv[1:]
    if not rule.subcommand:
        return args
    split = split_args(args, _GLOBAL_VALUE_OPTIONS.get(cmd.program, frozenset()), stop_at_operand=True)
    rest = args[split.end:]
    positional = [w for w in rest if not w.startswith("-")]
    for sub in rule.subcommand:
        words = sub.split()
        if positional[:len(words)] == words:
            remaining = list(rest)
            for w in words:
                remaining.remove(w)
            return tuple(remaining)
    return None


def _command_rule(rule: CommandRule, cmd: SimpleCommand) -> bool:
    if not cmd.argv or not _matches(cmd.program, rule.program):
        return False
    if rule.launched_by and not any(_matches(v, rule.launched_by) for v in cmd.via):
        return False
    args = _subcommand_args(cmd, rule)
    if args is None:
        return False
    split = split_args(args)
    if rule.flags_any and not any(has_flag(split.flags, f) for f in rule.flags_any):
        return False
    if any(has_flag(split.flags, f) for f in rule.unless_flags):
        return False
    if rule.args_any and not any(_matches(a, rule.args_any) for a in split.operands):
        return False
    return True


def _written_paths(rule: WriteRule, cmd: SimpleCommand) -> Iterator[str]:
    yield from cmd.writes
    if not cmd.argv:
        return
    for writer in rule.writers:
        if not _matches(cmd.program, writer.program):
            continue
        value_options = frozenset(writer.options) | frozenset(writer.script_options)
        split = split_args(cmd.argv[1:], value_options)
        if writer.flags_any and not any(has_flag(split.flags, f) for f in writer.flags_any):
            continue
        operands = split.operands
        if writer.script_options and not any(o in split.values for o in writer.script_options):
            operands = operands[1:]
        if writer.prefix:
            operands = [o[len(writer.prefix):] for o in operands if o.startswith(writer.prefix)]
        if writer.target == "operands":
            yield from operands
        elif writer.target == "last" and len(operands) >= 2:
            yield operands[-1]
        for option in writer.options:
            yield from split.values.get(option, [])


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _write_rule(rule: WriteRule, cmd: SimpleCommand, workdir: str) -> str | None:
    for raw in _written_paths(rule, cmd):
        path = resolve_path(raw, cmd.cwd)
        if path is not None and not _under(path, [workdir, *rule.allow]):
            return path
    return None


def _path_matches(path: str, patterns: Sequence[str]) -> bool:
    base = posixpath.basename(path)
    for pattern in patterns:
        if pattern.startswith("/"):
            hit = fnmatch.fnmatchcase(path, pattern)
        elif "/" in pattern:
            hit = fnmatch.fnmatchcase(path, "*/" + pattern)
        else:
            hit = fnmatch.fnmatchcase(base, pattern)
        if hit:
            return True
    return False


def _read_rule(rule: ReadRule, cmd: SimpleCommand) -> str | None:
    candidates = list(cmd.reads)
    if cmd.argv and _matches(cmd.program, rule.readers):
        candidates += split_args(cmd.argv[1:]).operands
    for raw in candidates:
        path = resolve_path(raw, cmd.cwd)
        if path is not None and _path_matches(path, rule.paths) and not _path_matches(path, rule.allow):
            return path
    return None


def _verdict(rule: Rule, cmd: SimpleCommand, workdir: str) -> Decision | None:
    path: str | None = None
    if isinstance(rule, CommandRule):
        hit = _command_rule(rule, cmd)
    elif isinstance(rule, PythonRule):
        hit = bool(cmd.python_names.intersection(rule.names_any))
    elif isinstance(rule, WriteRule):
        path = _write_rule(rule, cmd, workdir)
        hit = path is not None
    else:
        path = _read_rule(rule, cmd)
        hit = path is not None
    if not hit:
        return None
    reason = rule.reason.replace("{path}", path or "").replace("{workdir}", workdir)
    return Decision(
        allowed=False,
        rule=rule.name,
        reason=f"denied by policy rule '{rule.name}': `{cmd.show()}`{cmd.launched()} {reason}",
    )


# --------------------------------------------------------------------------- policy


def _decode(data: Mapping[str, Any], source: str) -> PolicySource:
    try:
        layer = msgspec.convert(data, PolicySource)
    except msgspec.ValidationError as exc:
        raise PolicyError(f"{source}: {strict_message(exc, PolicySource, data)}") from None
    names = [r.name for r in layer.rule]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise PolicyError(f"{source}: rule names must be unique, repeated: {', '.join(duplicates)}")
    return layer


def _read_toml(path: Path) -> Mapping[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read policy file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{path}: not valid TOML: {exc}") from None


class Policy:
    """An ordered set of rules; the first rule a call breaks denies it."""

    def __init__(self, rules: Sequence[Rule] = ()) -> None:
        self._rules = tuple(rules)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self._rules

    @classmethod
    def default(cls) -> Policy:
        """The rules shipped in `endstate/agent/policy.toml`."""
        return cls.load()

    @classmethod
    def allow_all(cls) -> Policy:
        """A policy with no rules: the mutant that disables the guard."""
        return cls(())

    @classmethod
    def load(cls, *extra: Mapping[str, Any] | Path) -> Policy:
        """The default rules with each extra layer applied in order.

        A layer is a table (a task's `[policy]`) or a TOML file. Its rules are
        appended, or replace an earlier rule of the same name; its `disable`
        list removes earlier rules by name. Raises PolicyError naming the
        source and field of anything that does not decode or names no rule.
        """
        default = resources.files("endstate.agent").joinpath("policy.toml")
        sources = [("endstate/agent/policy.toml", tomllib.loads(default.read_text(encoding="utf-8")))]
        for number, item in enumerate(extra, start=1):
            if isinstance(item, Path):
                sources.append((str(item), _read_toml(item)))
            else:
                sources.append((f"policy table #{number}", item))
        rules: dict[str, Rule] = {}
        for source, data in sources:
            layer = _decode(data, source)
            for name in layer.disable:
                if name not in rules:
                    known = ", ".join(rules) or "none"
                    raise PolicyError(f"{source}: `disable` names no rule {name!r}; known rules: {known}")
                del rules[name]
            for rule in layer.rule:
                rules[rule.name] = rule
        return cls(tuple(rules.values()))

    def __repr__(self) -> str:
        return f"Policy(rules=[{', '.join(r.name for r in self._rules)}])"

    def check(self, tool: str, args: Mapping[str, Any], *, workdir: str = "/workspace") -> Decision:
        """Whether the tool call may run. Never raises on odd input.

        A command too nested to follow, or one the analysis fails on, is denied:
        the guard fails closed.
        """
        if not self._rules or not isinstance(args, Mapping):
            return _ALLOW
        workdir = posixpath.normpath(workdir)
        if tool == "bash":
            command = args.get("command")
            if not isinstance(command, str):
                return _ALLOW
            try:
                commands = extract_commands(command, workdir)
            except (NestingTooDeep, RecursionError):
                return Decision(
                    allowed=False,
                    rule="too-deep",
                    reason=f"denied by policy: the command nests shells or substitutions more than "
                    f"{MAX_NESTING} levels deep, too deep to check; run the inner command directly",
                )
            except Exception as exc:  # a flaw in the analysis must not wave a command through
                return Decision(
                    allowed=False,
                    rule="unanalysable",
                    reason=f"denied by policy: the command could not be analysed ({type(exc).__name__}); "
                    "split it into simpler commands",
                )
        elif tool in ("read_file", "write_file", "edit_file"):
            path = args.get("path")
            if not isinstance(path, str):
                return _ALLOW
            # edit_file reads as well as writes: its answer reveals what the file holds.
            reads = (path,) if tool != "write_file" else ()
            writes = (path,) if tool != "read_file" else ()
            commands = [SimpleCommand(argv=(tool, path), cwd=workdir, reads=reads, writes=writes,
                                      label=f"{tool} {path}")]
        else:
            return _ALLOW
        for cmd in commands:
            for rule in self._rules:
                decision = _verdict(rule, cmd, workdir)
                if decision is not None:
                    return decision
        return _ALLOW
