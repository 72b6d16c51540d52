"""The task files are written from the Structs their reader decodes (endstate.task._toml): every shipped
task reads back as it was after a write, the files a writer made (tasks-real/, tasks-harbor/) come out
byte for byte, and what the writer cannot spell is an error, never a file that reads otherwise."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from endstate.task import (
    Budget,
    Category,
    GraderSpec,
    HackSpec,
    Manifest,
    Reference,
    ReferenceStep,
    SandboxSpec,
    ToolCallSpec,
    Triage,
    load_task,
    toml_text,
    write_manifest,
)

ROOT = Path(__file__).resolve().parents[2]
#: Suites whose files a writer made (`tasks new`, `tasks import harbor`): their bytes are the writer's.
WRITTEN = ("tasks-real", "tasks-harbor")
KINDS = {"task.toml": Manifest, "hack.toml": HackSpec, "reference.toml": Reference, "trajectory.toml": Reference,
         "wasteful.toml": Reference, "adequacy.toml": Triage}
#: The files a writer makes (adequacy.toml is written by hand from what `tasks adequacy` prints).
MADE = ("task.toml", "reference.toml", "hack.toml")


def _shipped() -> list[Path]:
    return sorted(p for suite in ("tasks", *WRITTEN) for p in (ROOT / suite).glob("*/**/*.toml")
                  if p.name in KINDS and not {"fixture", "solution", "holdout", "files", "solutions"} & set(p.parts))


def _header(text: str) -> list[str]:
    """The comment lines a file opens with, without their "# "."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[2:])
    return lines


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_shipped_file_read_written_and_read_again_is_what_it_was(path):
    kind, raw = KINDS[path.name], path.read_text(encoding="utf-8")
    read = msgspec.toml.decode(raw, type=kind)
    written = toml_text(read, _header(raw))
    assert msgspec.toml.decode(written, type=kind) == read
    if path.relative_to(ROOT).parts[0] in WRITTEN and path.name in MADE:
        assert written == raw


def test_every_suite_is_covered():
    shipped = [p.relative_to(ROOT).parts[0] for p in _shipped()]
    assert {suite: shipped.count(suite) >= 5 for suite in ("tasks", *WRITTEN)} == dict.fromkeys(("tasks", *WRITTEN),
                                                                                              True)


def test_the_layout_is_the_one_people_write(tmp_path):
    manifest = Manifest(
        id="demo", category=Category.FEATURE, description="d", solution_deletes=[], budget=Budget(wall_seconds=600.0),
        sandbox=SandboxSpec(cpus=1.5, user="root"),
        graders=[GraderSpec("endstate.grading:tests_pass", {"command": "pytest -q", "min_tests": 3}),
                 GraderSpec("endstate.grading:no_new_skips")],
        policy={"rule": [{"name": "r", "allow": ["/app"], "writers": [{"program": ["tee"]}]}]})
    assert toml_text(manifest, ["made here"]) == (
        '# made here\nid = "demo"\ncategory = "feature"\ndescription = "d"\nsolution_deletes = []\n\n'
        '[budget]\nwall_seconds = 600\n\n[sandbox]\ncpus = 1.5\nuser = "root"\n\n'
        '[[graders]]\nname = "endstate.grading:tests_pass"\nargs = { command = "pytest -q", min_tests = 3 }\n\n'
        '[[graders]]\nname = "endstate.grading:no_new_skips"\n\n'
        '[[policy.rule]]\nname = "r"\nallow = ["/app"]\nwriters = [{ program = ["tee"] }]\n')
    # A field left at its default is left out; `None` is how a file leaves `solution_deletes` unstated.
    assert "solution_deletes" not in toml_text(Manifest(id="d", category=Category.BUGFIX, graders=[]))
    steps = Reference([ReferenceStep(calls=[ToolCallSpec("read_file", {"path": "a"}),
                                            ToolCallSpec("read_file", {"path": "b"})]),
                       ReferenceStep(calls=[ToolCallSpec("bash", {"command": "make"})]), ReferenceStep(say="done")])
    assert toml_text(steps, ["the control"]) == (
        '# the control\n\n[[steps]]\ncalls = [\n    { tool = "read_file", args = { path = "a" } },\n'
        '    { tool = "read_file", args = { path = "b" } },\n]\n\n'
        '[[steps]]\ncalls = [{ tool = "bash", args = { command = "make" } }]\n\n[[steps]]\nsay = "done"\n')
    assert toml_text(HackSpec("d", base="fixture", symlinks={"a/b.py": "/tmp/b.py"}, caught_by=["holdout"])) == (
        'description = "d"\nbase = "fixture"\nsymlinks = { "a/b.py" = "/tmp/b.py" }\ncaught_by = ["holdout"]\n')


def test_any_text_reads_back_as_written_and_a_task_written_loads(tmp_path):
    awkward = "".join(map(chr, range(0, 0x80))) + 'a "quoted"\tname with \\ and é \U0001f600 \u2028 \x7f'
    manifest = Manifest(id="demo", category=Category.BUGFIX, description=awkward,
                        graders=[GraderSpec("endstate.grading:tests_pass", {"command": awkward, "n": -0.5})])
    assert msgspec.toml.decode(toml_text(manifest), type=Manifest) == manifest
    folder = tmp_path / "demo"
    for sub in ("fixture", "solution", "holdout"):
        (folder / sub).mkdir(parents=True)
    (folder / "prompt.md").write_text("fix it\n")
    write_manifest(folder, manifest)
    assert load_task(folder).manifest == manifest


def test_a_value_the_writer_cannot_spell_is_refused_not_written():
    with pytest.raises(TypeError, match="cannot write bytes"):
        toml_text(GraderSpec("x", {"blob": b"\x00"}))
    with pytest.raises(AssertionError, match="does not read back"):  # NaN is never equal to itself
        toml_text(GraderSpec("x", {"limit": float("nan")}))
