"""The forgiving tokenizer that still finds every simple command where bashlex gives up (see `_shell`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from endstate.agent._commands import SimpleCommand, _Dir

__all__ = ["lenient_commands"]


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


def lenient_commands(text: str, here: _Dir) -> list[SimpleCommand | str]:
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
