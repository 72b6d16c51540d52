"""Walking bashlex's tree of a command line into simple commands (see `_shell`).

bashlex builds its parser tables when imported (about a quarter of a second): it is
imported on the first parse, and the runner's fork server preloads it.
"""

from __future__ import annotations

from typing import Any

from endstate.agent._commands import SimpleCommand, _Dir

__all__ = ["BashlexWalker"]


# --------------------------------------------------------------------------- bashlex


class BashlexWalker:
    """Walks a bashlex tree. Yields simple commands, and nested command text as str."""

    _OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})

    def __init__(self, here: _Dir) -> None:
        self.here = here
        self.found: list[SimpleCommand | str] = []

    def run(self, text: str) -> list[SimpleCommand | str]:
        import bashlex

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
