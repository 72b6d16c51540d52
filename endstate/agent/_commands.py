"""The vocabulary of shell analysis: a simple command, the directory it runs in, how
prefix programs (`sudo`, `timeout`, `env`, shells) hand over to the command they run,
and splitting a program's arguments into options and operands.

`_shell.extract_commands` builds these from a command line; the policy reads them.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["MAX_NESTING", "NestingTooDeep", "SimpleCommand", "SplitArgs", "has_flag", "resolve_path", "split_args"]

_HOME = "/root"
#: Deeper nesting of `bash -c`, `eval` and substitutions than this is refused unread.
MAX_NESTING = 12


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command as the shell would run it.

    Wrapper prefixes are already taken off: `sudo rm x` is an `rm` whose `via`
    holds "sudo". `writes` and `reads` are redirection targets as written, not
    yet resolved; resolve them against `cwd` with `resolve_path`.
    """

    argv: tuple[str, ...]
    #: Directory it runs in; None once a `cd` went somewhere unknowable.
    cwd: str | None
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    #: Text fed on standard input by a here-document or here-string.
    stdin: str | None = None
    #: Programs that started it: sudo, xargs, find, bash, python ...
    via: tuple[str, ...] = ()
    #: Identifiers in inline Python code it runs.
    python_names: frozenset[str] = frozenset()
    #: How to show it when it is not a shell command (a file tool call).
    label: str = ""

    @property
    def program(self) -> str:
        """The base name of the program run (`/bin/rm` is `rm`); "" for none."""
        return posixpath.basename(self.argv[0]) if self.argv else ""

    def show(self) -> str:
        """The command as the model would recognise it."""
        if self.label:
            return self.label
        words = [_show_word(w) for w in self.argv]
        words += [f"> {_show_word(p)}" for p in self.writes]
        words += [f"< {_show_word(p)}" for p in self.reads]
        text = " ".join(words)
        return text if len(text) <= 160 else text[:157] + "..."

    def launched(self) -> str:
        """" (run by sudo, xargs)", or "" when nothing started it."""
        return f" (run by {', '.join(dict.fromkeys(self.via))})" if self.via else ""


def _show_word(word: str) -> str:
    # Globs and ~ are shown bare: quoting them would suggest a literal name.
    return word if re.fullmatch(r"[\w@%+=:,./~*?{}\[\]^-]+", word) else shlex.quote(word)


class NestingTooDeep(Exception):
    """A command nests shells or substitutions more than MAX_NESTING levels deep."""


class _Dir:
    """The working directory while walking a command; subshells get a copy."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def fork(self) -> _Dir:
        return _Dir(self.path)

    def change(self, args: Sequence[str]) -> None:
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if not operands:
            self.path = _HOME
        elif operands[0] == "-":
            self.path = None
        else:
            self.path = resolve_path(operands[0], self.path)


def resolve_path(path: str, cwd: str | None) -> str | None:
    """An absolute normalised path, or None when it depends on the runtime."""
    if path == "~" or path.startswith("~/"):
        path = _HOME + path[1:]
    elif path.startswith("~"):
        path = "/home/" + path[1:]
    for var in ("$HOME", "${HOME}"):
        if path == var or path.startswith(var + "/"):
            path = _HOME + path[len(var):]
    for var in ("$PWD", "${PWD}"):
        if cwd is not None and (path == var or path.startswith(var + "/")):
            path = cwd + path[len(var):]
    if "$" in path or "`" in path or not path:
        return None
    if not path.startswith("/"):
        if cwd is None:
            return None
        path = f"{cwd}/{path}"
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/")


# How prefix programs hand over to the command they run: options that take a
# value, positional words before the command, and whether NAME=value words come first.
@dataclass(frozen=True)
class _Wrapper:
    value_options: frozenset[str] = frozenset()
    operands: int = 0
    assignments: bool = False


_WRAPPERS: Mapping[str, _Wrapper] = {
    "sudo": _Wrapper(frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T",
                                "--user", "--group", "--host", "--prompt", "--chdir",
                                "--role", "--type", "--other-user", "--command-timeout"})),
    "doas": _Wrapper(frozenset({"-u", "-C"})),
    "env": _Wrapper(frozenset({"-u", "--unset", "-C", "--chdir"}), assignments=True),
    "nice": _Wrapper(frozenset({"-n", "--adjustment"})),
    "ionice": _Wrapper(frozenset({"-c", "-n", "--class", "--classdata"})),
    "timeout": _Wrapper(frozenset({"-s", "--signal", "-k", "--kill-after"}), operands=1),
    "time": _Wrapper(frozenset({"-f", "--format", "-o", "--output"})),
    "stdbuf": _Wrapper(frozenset({"-i", "-o", "-e"})),
    "taskset": _Wrapper(operands=1),
    "command": _Wrapper(),
    "builtin": _Wrapper(),
    "exec": _Wrapper(frozenset({"-a"})),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "xargs": _Wrapper(frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s",
                                 "--arg-file", "--delimiter", "--max-args", "--max-procs",
                                 "--max-lines", "--replace", "--eof", "--max-chars",
                                 "--process-slot-var"})),
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# Options of su-like programs whose value is a shell command line.
_COMMAND_OPTIONS: Mapping[str, frozenset[str]] = {
    "su": frozenset({"-c", "--command"}),
    "runuser": frozenset({"-c", "--command"}),
}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)*)?")
# Calls whose string argument is a command line, and whose list argument is an argv.
_PYTHON_RUNNERS = frozenset({"system", "popen", "run", "call", "check_call", "check_output",
                             "Popen", "getoutput", "getstatusoutput"})


# --------------------------------------------------------------------------- arguments


@dataclass
class SplitArgs:
    """A command's arguments sorted as getopt would sort them."""

    flags: list[str] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    #: Values of value-taking options, by the option as the rule spells it.
    values: dict[str, list[str]] = field(default_factory=dict)
    #: Index just past the options (where a wrapped command starts).
    end: int = 0


def split_args(args: Sequence[str], value_options: frozenset[str] = frozenset(),
               *, stop_at_operand: bool = False) -> SplitArgs:
    """Separate flags, option values and operands, as getopt would.

    `value_options` take a value (`-o FILE`, `-oFILE`, `--output=FILE`); with
    `stop_at_operand` splitting ends at the first operand, as for a wrapper.
    """
    out = SplitArgs()
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            out.operands.extend(args[i + 1:])
            i = len(args)
            break
        if len(word) < 2 or word[0] not in "-+" or (word[0] == "+" and word not in value_options):
            if stop_at_operand:
                break
            out.operands.append(word)
            i += 1
            continue
        out.flags.append(word)
        i += 1
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if eq:
                out.values.setdefault(name, []).append(value)
            elif word in value_options and i < len(args):
                out.values.setdefault(word, []).append(args[i])
                i += 1
            continue
        if word in value_options:
            if i < len(args):
                out.values.setdefault(word, []).append(args[i])
                i += 1
            continue
        for j, char in enumerate(word[1:], start=2):
            option = word[0] + char
            if option in value_options:
                rest = word[j:]
                if rest:
                    out.values.setdefault(option, []).append(rest)
                elif i < len(args):
                    out.values.setdefault(option, []).append(args[i])
                    i += 1
                break
    out.end = i
    return out


def has_flag(flags: Sequence[str], wanted: str) -> bool:
    """Whether `wanted` is among `flags`.

    A short flag matches inside a cluster (`-r` in `-rf`) and with its value
    attached; a long flag matches `--flag=value` and getopt abbreviations (`--recur`).
    """
    for flag in flags:
        if wanted.startswith("--"):
            name = flag.partition("=")[0]
            if name == wanted or (name.startswith("--") and len(name) >= 3 and wanted.startswith(name)):
                return True
        elif len(wanted) == 2:
            if flag.startswith(wanted) or (
                not flag.startswith("--") and flag[1:].isalnum() and wanted[1] in flag[1:]
            ):
                return True
        elif flag == wanted:
            return True
    return False
