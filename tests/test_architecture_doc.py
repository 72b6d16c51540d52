"""docs/ARCHITECTURE.md against the code it draws: every module it names exists, every package of
the floors (tests/test_architecture.py's FLOORS) is drawn, and every coined word of the glossary
is one the code or the docs use."""

from __future__ import annotations

import re
from pathlib import Path

from test_architecture import FLOORS

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")


def test_every_module_the_page_names_exists():
    # A module of a package, or a file of the checkout (bench/, tests/); not a task folder's (probe/probe.py).
    tops = {p for floor in FLOORS for p in floor} | {"bench", "tests", "scripts"}
    named = {p for p in re.findall(r"`([a-z_]+/[\w/]+\.(?:py|sh))", DOC) if p.split("/")[0] in tops}
    assert len(named) >= 40
    assert sorted(p for p in named if not (ROOT / "endstate" / p).is_file() and not (ROOT / p).is_file()) == []


def test_every_package_of_the_floors_is_drawn():
    drawing = DOC.split("```")[1]
    # A floor's packages open its line: "grading    cassettes     grading: ...", "errors, guards, endstate the ..."
    drawn = {word.strip(",") for line in drawing.splitlines() for word in line.split()[:3]}
    assert sorted({p for floor in FLOORS for p in floor} - drawn) == []


def test_every_word_of_the_glossary_is_used_in_the_code():
    glossary = DOC.split("## Glossary", 1)[1]
    words = [w for cell in re.findall(r"^\| ([^|]+?) \|", glossary, re.MULTILINE)[2:] for w in cell.split(", ")]
    assert len(words) >= 20
    code = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "endstate").rglob("*.py")).lower()
    unused = [w for w in words if w.lower() not in code and w.replace(" ", "_").lower() not in code]
    assert unused == []
