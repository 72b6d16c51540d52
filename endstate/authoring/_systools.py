"""Programs a project's code or tests run that endstate's sandbox image does not hold.

A real project's tests call system tools: click pipes its pager tests to `less`. Such a
program is found where the Python code names it as the program of a command: the first item
of a list or tuple (`["less", "-R"]`), or the first word of a string given to a call that runs
or looks up programs (`subprocess.run("make -C ...")`, `shutil.which("zip")`, `os.system`).
Only programs of `PROGRAMS` count, each with the Debian package that has it; the task's image
installs those packages from Debian's own (signed) mirrors when it is built
(`_taskimage.write_task_image`), never the shared sandbox image.
"""

from __future__ import annotations

import ast

from endstate.sandbox import Tree
from endstate.task import parse_python

__all__ = ["PROGRAMS", "system_packages"]

#: Program -> Debian bookworm package, for the tools a test suite calls that the sandbox image lacks
#: (it has git, tar, gzip, diff, openssl, ps, more). `file` is left out: a word too common to read as one.
PROGRAMS = {"less": "less", "make": "make", "gcc": "gcc", "cc": "gcc", "g++": "g++", "patch": "patch",
            "unzip": "unzip", "zip": "zip", "xz": "xz-utils", "bzip2": "bzip2", "zstd": "zstd",
            "sqlite3": "sqlite3", "curl": "curl", "wget": "wget", "rsync": "rsync", "jq": "jq",
            "lsof": "lsof", "strace": "strace", "tmux": "tmux", "screen": "screen", "nano": "nano",
            "vim": "vim"}
#: Calls whose string argument is a command or a program's name.
_RUNNERS = {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "which", "spawnlp",
            "execvp", "execlp", "getstatusoutput", "getoutput", "create_subprocess_exec", "create_subprocess_shell"}


def _program(node: ast.AST) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        return node.value.split()[0]
    return ""


def _named(module: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value in PROGRAMS:
                found.add(first.value)  # a whole word: ["less", "-R"], never a phrase's first word
        elif isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _RUNNERS:
                found.add(_program(node.args[0]))
    return found & set(PROGRAMS)


def system_packages(project: Tree) -> list[str]:
    """The Debian packages of the programs the project's Python files run (sorted, each once)."""
    named: set[str] = set()
    for path, entry in project.items():
        if not path.endswith(".py") or entry.link or b"" == entry.data:
            continue
        text = entry.data.decode("utf-8", errors="replace")
        if not any(f"'{p}" in text or f'"{p}' in text for p in PROGRAMS):
            continue
        try:
            named |= _named(parse_python(text))
        except (SyntaxError, ValueError):
            continue
    return sorted({PROGRAMS[p] for p in named})
