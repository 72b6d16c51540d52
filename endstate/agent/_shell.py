"""Turning a bash command line into the simple commands it would run.

A simple command is an argv list with its redirections, the directory it runs in
and the programs that started it. `extract_commands` follows `;`, `&&`, `||`,
pipes, subshells, groups, command and process substitution, `bash -c` strings,
`eval`, here-documents fed to a shell, `xargs`, `find -exec`, inline `python -c`
code, and prefixes such as `sudo` or `timeout`.

The tree comes from bashlex; where bashlex gives up, a forgiving tokenizer still
finds every simple command. Paths are resolved against the workspace and any `cd`
seen earlier; one that cannot be known before the command runs (`$DIR/x`) resolves
to None. `~` and `$HOME` resolve to /root, the sandbox user's home.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import bashlex

__all__ = [
    "MAX_NESTING",
    "NestingTooDeep",
    "SimpleCommand",
    "SplitArgs",
    "extract_commands",
    "has_flag",
    "resolve_path",
    "split_args",
]

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


# --------------------------------------------------------------------------- extraction


def extract_commands(command: str, workdir: str) -> list[SimpleCommand]:
    """The simple commands `command` would run, in order, starting in `workdir`.

    Raises NestingTooDeep (or RecursionError) for a command nested too deeply to
    follow; the caller decides what that means.
    """
    return _Extractor(workdir).commands(command)


class _Extractor:
    """Turns a command line into the simple commands it would run."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir

    def commands(self, text: str) -> list[SimpleCommand]:
        return list(self._parse(text, _Dir(self.workdir), (), 0))

    # -- parsing -------------------------------------------------------------

    def _parse(self, text: str, here: _Dir, via: tuple[str, ...],
               depth: int) -> Iterator[SimpleCommand]:
        if depth > MAX_NESTING:
            raise NestingTooDeep
        if not text.strip():
            return
        walked = here.fork()
        try:
            found = _BashlexWalker(walked).run(text)
            here.path = walked.path
        except Exception:
            # bashlex rejects plenty of valid bash ([[ ]], $(( )), case, quoted
            # here-document delimiters) and fails in assorted ways; the lenient
            # tokenizer below still sees every simple command.
            found = _lenient_commands(text, here)
        for item in found:
            if isinstance(item, str):
                yield from self._parse(item, here.fork(), via, depth + 1)
            else:
                yield from self._expand(replace(item, via=via + item.via), depth)

    def _expand(self, cmd: SimpleCommand, depth: int) -> Iterator[SimpleCommand]:
        """Yield `cmd` and whatever it runs, with wrapper prefixes taken off."""
        if depth > MAX_NESTING:
            raise NestingTooDeep
        program, args = cmd.program, cmd.argv[1:]
        wrapper = _WRAPPERS.get(program)
        if wrapper is not None:
            split = split_args(args, wrapper.value_options, stop_at_operand=True)
            rest = list(args[split.end:])
            if wrapper.assignments:
                while rest and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
                    rest.pop(0)
            rest = rest[wrapper.operands:]
            if rest:
                yield from self._expand(replace(cmd, argv=tuple(rest), via=cmd.via + (program,)), depth + 1)
                return
        yield cmd
        inner_via = cmd.via + (program,)
        if program in _SHELLS:
            split = split_args(args, _SHELL_VALUE_OPTIONS, stop_at_operand=True)
            short = "".join(f[1:] for f in split.flags if f.startswith("-") and not f.startswith("--"))
            rest = args[split.end:]
            if "c" in short and rest:
                yield from self._parse(rest[0], _Dir(cmd.cwd), inner_via, depth + 1)
            elif (not rest or "s" in short) and cmd.stdin:
                yield from self._parse(cmd.stdin, _Dir(cmd.cwd), inner_via, depth + 1)
        elif program == "eval":
            yield from self._parse(" ".join(args), _Dir(cmd.cwd), inner_via, depth + 1)
        elif program in _COMMAND_OPTIONS:
            split = split_args(args, _COMMAND_OPTIONS[program])
            for option in _COMMAND_OPTIONS[program]:
                for line in split.values.get(option, []):
                    yield from self._parse(line, _Dir(cmd.cwd), inner_via, depth + 1)
        elif program == "find":
            yield from self._find_exec(cmd, depth)
        elif _PYTHON.fullmatch(program):
            code = _python_code(args, cmd.stdin)
            if code is not None:
                yield from self._python(cmd, code, depth)

    def _find_exec(self, cmd: SimpleCommand, depth: int) -> Iterator[SimpleCommand]:
        args = cmd.argv[1:]
        for i, word in enumerate(args):
            if word in _FIND_EXEC:
                end = i + 1
                while end < len(args) and args[end] not in (";", "+"):
                    end += 1
                if end > i + 1:
                    inner = SimpleCommand(argv=tuple(args[i + 1:end]), cwd=cmd.cwd,
                                          via=cmd.via + ("find",))
                    yield from self._expand(inner, depth + 1)

    def _python(self, cmd: SimpleCommand, code: str, depth: int) -> Iterator[SimpleCommand]:
        names: set[str] = set()
        via = cmd.via + (cmd.program,)
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
            yield replace(cmd, python_names=frozenset(names))
            return
        nested: list[SimpleCommand | str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.update(node.name.split("."))
                if node.asname:
                    names.add(node.asname)
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called in _PYTHON_RUNNERS:
                    first = node.args[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        nested.append(first.value)
                    elif isinstance(first, (ast.List, ast.Tuple)) and all(
                        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts
                    ) and first.elts:
                        argv = tuple(e.value for e in first.elts)  # type: ignore[attr-defined]
                        nested.append(SimpleCommand(argv=argv, cwd=cmd.cwd, via=via))
        yield replace(cmd, python_names=frozenset(names))
        for item in nested:
            if isinstance(item, str):
                yield from self._parse(item, _Dir(cmd.cwd), via, depth + 1)
            else:
                yield from self._expand(item, depth + 1)


def _python_code(args: Sequence[str], stdin: str | None) -> str | None:
    """The code a python command line runs inline, or None if it runs a file or module."""
    i = 0
    while i < len(args):
        word = args[i]
        if word == "-":
            return stdin
        if not word.startswith("-") or word == "--":
            return None
        i += 1
        if word.startswith("--"):
            continue
        for j, char in enumerate(word[1:], start=2):
            if char == "c":
                return word[j:] or (args[i] if i < len(args) else None)
            if char == "m":
                return None
            if char in "WX":
                if not word[j:]:
                    i += 1
                break
    return stdin


# --------------------------------------------------------------------------- bashlex


class _BashlexWalker:
    """Walks a bashlex tree. Yields simple commands, and nested command text as str."""

    _OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})

    def __init__(self, here: _Dir) -> None:
        self.here = here
        self.found: list[SimpleCommand | str] = []

    def run(self, text: str) -> list[SimpleCommand | str]:
        for tree in bashlex.parse(text):
            self._walk(tree, self.here)
        return self.found

    def _walk(self, node: Any, here: _Dir) -> None:
        kind = node.kind
        if kind == "command":
            self._command(node, here)
        elif kind == "pipeline":
            for part in node.parts:
                self._walk(part, here.fork())
        elif kind == "compound":
            opens_subshell = any(getattr(p, "word", None) == "(" for p in node.list if p.kind == "reservedword")
            inner = here.fork() if opens_subshell else here
            for part in node.list:
                self._walk(part, inner)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self._walk(node.command, here.fork())
        elif kind == "function":
            for part in node.parts:
                self._walk(part, here.fork())
        else:
            for part in getattr(node, "parts", ()):
                self._walk(part, here)

    def _substitutions(self, node: Any, here: _Dir) -> None:
        for part in getattr(node, "parts", ()):
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self._walk(part.command, here.fork())
            else:
                self._substitutions(part, here)

    def _command(self, node: Any, here: _Dir) -> None:
        argv: list[str] = []
        writes: list[str] = []
        reads: list[str] = []
        stdin: str | None = None
        for part in node.parts:
            self._substitutions(part, here)
            if part.kind == "word":
                argv.append(part.word)
            elif part.kind == "redirect":
                target = part.output
                if part.type in ("<<", "<<-"):
                    body = part.heredoc.value if getattr(part, "heredoc", None) else ""
                    stdin = body.rpartition("\n")[0] if "\n" in body else ""
                elif not hasattr(target, "kind"):
                    continue  # 2>&1 and friends duplicate a descriptor
                else:
                    self._substitutions(target, here)
                    if part.type == "<<<":
                        stdin = target.word
                    elif part.type in self._OUTPUT:
                        if part.type == ">&" and (target.word.isdigit() or target.word == "-"):
                            continue
                        writes.append(target.word)
                    elif part.type in ("<", "<&"):
                        reads.append(target.word)
        if argv and argv[0] in ("cd", "pushd"):
            here.change(argv[1:])
        self.found.append(SimpleCommand(argv=tuple(argv), cwd=here.path, writes=tuple(writes),
                                        reads=tuple(reads), stdin=stdin))


# --------------------------------------------------------------------------- fallback


@dataclass
class _Tok:
    kind: Literal["word", "op"]
    text: str
    #: A here-document's body, filled in when its line ends.
    body: str | None = None


_OPERATORS = ("&>>", "<<<", "<<-", "&&", "||", ";;", "|&", ">>", ">|", ">&", "<&", "&>", "<<",
              "<>", ";", "&", "|", "(", ")", "<", ">", "\n")
_CONTROL = frozenset({"&&", "||", ";;", "|&", ";", "&", "|", "(", ")", "\n"})
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until",
                       "esac", "{", "}", "!", "time", "function", "coproc"})


def _closing(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """Index of the bracket closing the one before `start`; len(text) if none."""
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "'":
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if char == open_:
            depth += 1
        elif char == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _backtick_end(text: str, start: int) -> int:
    i = start
    while i < len(text) and text[i] != "`":
        i += 2 if text[i] == "\\" else 1
    return min(i, len(text))


def _lex(text: str) -> tuple[list[_Tok], list[str]]:
    """Words and operators, bash-style but forgiving: an unclosed quote runs to the end.

    Also returns the text of every command or process substitution met.
    """
    toks: list[_Tok] = []
    subs: list[str] = []
    pending: list[tuple[_Tok, str, bool]] = []
    word: list[str] | None = None
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal word
        if word is None:
            return
        toks.append(_Tok("word", "".join(word)))
        if len(toks) >= 2 and toks[-2].kind == "op" and toks[-2].text in ("<<", "<<-"):
            pending.append((toks[-2], toks[-1].text, toks[-2].text == "<<-"))
        word = None

    def put(piece: str) -> None:
        nonlocal word
        if word is None:
            word = []
        word.append(piece)

    while i < n:
        char = text[i]
        if char == "\\":
            if text.startswith("\\\n", i):
                i += 2
                continue
            put(text[i + 1:i + 2])
            i += 2
        elif char == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            put(text[i + 1:end])
            i = end + 1
        elif char == '"':
            put("")
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    put(text[i + 1] if text[i + 1] in '"\\$`' else text[i:i + 2])
                    i += 2
                elif text.startswith("$(", i) and not text.startswith("$((", i):
                    end = _closing(text, i + 2)
                    subs.append(text[i + 2:end])
                    put(text[i:end + 1])
                    i = end + 1
                elif text[i] == "`":
                    end = _backtick_end(text, i + 1)
                    subs.append(text[i + 1:end])
                    put(text[i:end + 1])
                    i = end + 1
                else:
                    put(text[i])
                    i += 1
            i += 1
        elif text.startswith("$((", i):
            end = _closing(text, i + 3)
            put(text[i:end + 2])
            i = end + 2
        elif text.startswith("$(", i) or (word is None and text.startswith(("<(", ">("), i)):
            end = _closing(text, i + 2)
            subs.append(text[i + 2:end])
            put(text[i:end + 1])
            i = end + 1
        elif char == "`":
            end = _backtick_end(text, i + 1)
            subs.append(text[i + 1:end])
            put(text[i:end + 1])
            i = end + 1
        elif char == "#" and word is None:
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif char in " \t":
            end_word()
            i += 1
        elif char in ";&|()<>\n":
            if char in "<>" and word is not None and "".join(word).isdigit():
                word = None  # a descriptor number: 2>err.log
            end_word()
            op = next(o for o in _OPERATORS if text.startswith(o, i))
            toks.append(_Tok("op", op))
            i += len(op)
            if op == "\n" and pending:
                for tok, delimiter, strip_tabs in pending:
                    lines: list[str] = []
                    while i < n:
                        end = text.find("\n", i)
                        end = n if end < 0 else end
                        line = text[i:end]
                        i = end + 1
                        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                            break
                        lines.append(line)
                    tok.body = "\n".join(lines)
                pending.clear()
        else:
            put(char)
            i += 1
    end_word()
    return toks, subs


def _lenient_commands(text: str, here: _Dir) -> list[SimpleCommand | str]:
    toks, subs = _lex(text)
    found: list[SimpleCommand | str] = list(subs)
    stack: list[_Dir] = []
    argv: list[str] = []
    writes: list[str] = []
    reads: list[str] = []
    stdin: str | None = None
    i = 0

    def flush() -> None:
        nonlocal argv, writes, reads, stdin
        while argv and argv[0] in _KEYWORDS:
            argv.pop(0)
        if argv and argv[0] in ("for", "select", "case"):
            argv = []
        if argv and argv[0] in ("cd", "pushd"):
            here.change(argv[1:])
        if argv or writes or reads:
            found.append(SimpleCommand(argv=tuple(argv), cwd=here.path, writes=tuple(writes),
                                       reads=tuple(reads), stdin=stdin))
        argv, writes, reads, stdin = [], [], [], None

    while i < len(toks):
        tok = toks[i]
        i += 1
        if tok.kind == "word":
            argv.append(tok.text)
            continue
        if tok.text in _CONTROL:
            flush()
            if tok.text == "(":
                stack.append(here)
                here = here.fork()
            elif tok.text == ")" and stack:
                here = stack.pop()
            continue
        target = toks[i].text if i < len(toks) and toks[i].kind == "word" else None
        if target is None:
            continue
        i += 1
        if tok.text in ("<<", "<<-"):
            stdin = tok.body or ""
        elif tok.text == "<<<":
            stdin = target
        elif tok.text in ("<", "<&"):
            if not target.isdigit():
                reads.append(target)
        elif not (tok.text == ">&" and (target.isdigit() or target == "-")):
            writes.append(target)
    flush()
    return found
