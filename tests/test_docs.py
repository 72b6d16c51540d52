"""The README stays a starting page, and every relative link in it and in docs/ leads
somewhere: a moved section must not leave a dead link behind."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "tasks" / "README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, spaces to -)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def test_the_readme_is_short_and_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250
    opening = "\n".join(lines[:6])
    assert "make demo" in opening and "make test" in opening
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, flags=re.M) and re.search(r"^test:", makefile, flags=re.M)


def test_every_relative_link_resolves():
    dead = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                dead.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                dead.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert dead == []


def test_every_docs_page_is_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    assert [p.name for p in (ROOT / "docs").glob("*.md") if f"docs/{p.name}" not in readme] == []


def test_the_probe_warning_links_to_a_real_heading():
    assert "the-probe" in _anchors(ROOT / "docs" / "tasks.md")
