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
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from endstate.agent._bashlex import BashlexWalker
from endstate.agent._commands import (
    _COMMAND_OPTIONS,
    _FIND_EXEC,
    _PYTHON,
    _PYTHON_RUNNERS,
    _SHELL_VALUE_OPTIONS,
    _SHELLS,
    _WRAPPERS,
    MAX_NESTING,
    NestingTooDeep,
    SimpleCommand,
    _Dir,
    split_args,
)
from endstate.agent._lenient import lenient_commands
from endstate.task import parse_python

__all__ = ["extract_commands"]


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
            found = BashlexWalker(walked).run(text)
            here.path = walked.path
        except Exception:
            # bashlex rejects plenty of valid bash ([[ ]], $(( )), case, quoted
            # here-document delimiters) and fails in assorted ways; the lenient
            # tokenizer below still sees every simple command.
            found = lenient_commands(text, here)
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
            tree = parse_python(code)
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
