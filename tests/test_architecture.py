"""The package layering, read from the source's own imports (parsed, never imported).

Arrows point down only: a package imports packages on lower floors, never one on its
own floor or above, and no chain of imports between modules comes back to where it
started. docs/ARCHITECTURE.md draws the same floors. A new package must be given a
floor here before it can import or be imported.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import endstate

ROOT = Path(endstate.__file__).parent

#: Bottom floor first. `endstate` is the package root (its version string).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("endstate", "errors", "guards"),
    ("sandbox",),
    ("task",),
    ("models",),
    ("grading", "cassettes"),
    ("agent",),
    ("agents",),
    ("run",),
    ("checks",),
    ("authoring",),
    ("report",),
    ("cli", "pytest_plugin"),
    ("__main__",),
)
FLOOR = {package: level for level, packages in enumerate(FLOORS) for package in packages}


def _module_name(path: Path) -> str:
    parts = ["endstate", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(module: str) -> str:
    """The floor-holding package a module belongs to: `endstate.run._runner` -> `run`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "endstate"


class Import:
    def __init__(self, source: str, target: str, names: tuple[str, ...], line: int, path: Path) -> None:
        self.source, self.target, self.names, self.line, self.path = source, target, names, line, path

    def __repr__(self) -> str:
        return f"{self.path.relative_to(ROOT.parent)}:{self.line}: {self.source} -> {self.target}"


def _imports() -> list[Import]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if "harness" in path.relative_to(ROOT).parts[:-1] or "image" in path.relative_to(ROOT).parts[:-1]:
            continue  # runs inside the sandbox, on its own
        module = _module_name(path)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                names = tuple(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "endstate":
                        found.append(Import(module, alias.name, (), node.lineno, path))
                continue
            else:
                continue
            if target.split(".")[0] != "endstate":
                continue
            # `from endstate.sandbox import _docker` names a module, not a value of the package.
            modules = [f"{target}.{n}" for n in names if (ROOT.parent / f"{target}.{n}".replace(".", "/")).with_suffix(".py").is_file()]
            for target_module in modules or [target]:
                found.append(Import(module, target_module, names, node.lineno, path))
    return found


IMPORTS = _imports()


def test_every_package_has_a_floor():
    packages = {_package_of(i.source) for i in IMPORTS} | {_package_of(i.target) for i in IMPORTS}
    assert packages - set(FLOOR) == set(), "give the new package a floor in FLOORS (and in docs/ARCHITECTURE.md)"


def test_imports_point_down_the_floors():
    upward = [i for i in IMPORTS
              if _package_of(i.source) != _package_of(i.target)
              and FLOOR.get(_package_of(i.source), 99) <= FLOOR.get(_package_of(i.target), -1)]
    assert upward == [], "imports that run sideways or up a floor: move the shared name down a floor"


def test_no_package_reaches_into_another_packages_private_modules():
    reaching = [i for i in IMPORTS
                if _package_of(i.source) != _package_of(i.target)
                and any(part.startswith("_") and part != "__main__" for part in i.target.split(".")[2:])]
    assert reaching == [], "import the public name from the package's __init__ (add it to __all__ there)"


def test_no_import_circle_between_modules():
    graph: dict[str, set[str]] = {}
    for i in IMPORTS:
        graph.setdefault(i.source, set()).add(i.target)
    circles, state = [], {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                circles.append([*trail[trail.index(target):], target] if target in trail else [module, target])
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == [], "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def code_lines(source: str) -> int:
    """The lines of a module that hold code: blank lines, comments and docstrings are prose a
    module should not have to cut to stay under the cap."""
    prose: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                prose.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if number not in prose and line.strip() and not line.lstrip().startswith("#"))


def test_code_lines_leave_out_docstrings_comments_and_blank_lines():
    source = 'def f():\n    """One.\n\n    Two."""\n    # a comment\n\n    return "#not a comment"  # trailing\n'
    assert code_lines(source) == 2
    assert code_lines('x = """a\nb"""\n') == 2  # a string that is no docstring is code


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_450_lines_of_code(path):
    lines = code_lines(path.read_text(encoding="utf-8"))
    assert lines <= 450, f"{path.relative_to(ROOT.parent)} has {lines} lines of code: split it where a newcomer would look"


def _loaded_after(code: str, prefixes: tuple[str, ...]) -> list[str]:
    probe = f"{code}\nimport sys\nprint(*sorted({{m.split('.')[0] for m in sys.modules}} & set({prefixes!r})))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize("code", [
    "import endstate.agent",
    "import endstate.task, endstate.grading, endstate.cassettes, endstate.models",
    "from endstate.sandbox import BACKENDS; BACKENDS['local']",
])
def test_the_agent_and_the_packages_below_it_load_neither_vcrpy_nor_docker(code):
    # vcrpy loads with a cassette session, the docker SDK with the Docker backend: both on first use.
    assert _loaded_after(code, ("vcr", "docker")) == []


def test_only_the_sandbox_package_runs_the_docker_program():
    """A command line that starts with `docker` is built in sandbox/ only (its `docker_cli`), so every
    container carries the reaper's labels and every failure reads the same."""
    running = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).parts[0] == "sandbox":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant) \
                    and node.elts[0].value == "docker" and len(node.elts) > 1:
                running.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert running == [], "the docker program run outside sandbox/: " + ", ".join(running)


def test_only_the_sandbox_package_talks_to_docker():
    """The docker SDK and its errors stay in sandbox/: other packages call its functions."""
    talking = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).parts[0] == "sandbox":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(name == "docker" or name.startswith("docker.") for name in names):
                talking.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    assert talking == [], "call a function of endstate.sandbox instead of the docker SDK"


def test_grading_reads_no_undeclared_state_off_the_sealed_end_state():
    """What grading keeps while it grades is declared in Grading.__init__ (grading/_state.py), never
    read off the sealed end state with getattr and a default."""
    hits = [f"{path.relative_to(ROOT.parent)}:{n}" for path in sorted(ROOT.rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if "getattr(sealed" in line or "sealed: Any" in line]
    assert hits == [], "declare the attribute in grading.Grading.__init__ and read it plainly"


def test_only_the_run_folder_and_the_cassettes_spell_a_runs_paths():
    """transcripts/, diffs/ and <stem>.cassette are named by RunFolder and cassettes.cassette_file."""
    owners = {ROOT / "run" / "_folder.py"} | set((ROOT / "cassettes").rglob("*.py"))
    spelled = [f"{path.relative_to(ROOT.parent)}:{n}" for path in sorted(ROOT.rglob("*.py")) if path not in owners
               for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
               if '"transcripts"' in line or '"diffs"' in line or '.cassette"' in line]
    assert spelled == [], "take the path from endstate.run.RunFolder or endstate.cassettes.cassette_file"
