"""The one writer of a made task's TOML: what it writes reads back as what was meant."""

from __future__ import annotations

import tomllib

from endstate.authoring._toml import Manifest, hack_text, manifest_text, steps_text
from endstate.task import load_task


def test_a_manifest_reads_back_field_for_field_and_loads_as_a_task(tmp_path):
    awkward = 'a "quoted"\tname with \\ and \x1b[0m and é'
    manifest = Manifest(
        id="demo", description=awkward, header=["made here", "second line"], solution_deletes=["old.py"],
        tables={"budget": {"wall_seconds": 600.0}, "seal": {}, "sandbox": {"cpus": 1.5, "memory_mb": 512}},
        graders=[("endstate.grading:tests_pass", {"command": "python -m pytest -q", "min_tests": 3}),
                 ("endstate.grading:no_new_skips", None)],
        policy_rules=[{"name": "r", "allow": ["/app/**"], "on": True}])
    text = manifest_text(manifest)
    assert text.startswith("# made here\n# second line\n")
    read = tomllib.loads(text)
    assert read["description"] == awkward and read["solution_deletes"] == ["old.py"]
    assert read["budget"] == {"wall_seconds": 600} and "seal" not in read  # an empty table is left out
    assert read["sandbox"] == {"cpus": 1.5, "memory_mb": 512}
    assert read["graders"] == [{"name": "endstate.grading:tests_pass",
                                "args": {"command": "python -m pytest -q", "min_tests": 3}},
                               {"name": "endstate.grading:no_new_skips"}]
    assert read["policy"]["rule"] == [{"name": "r", "allow": ["/app/**"], "on": True}]

    folder = tmp_path / "demo"
    for sub in ("fixture", "solution", "holdout"):
        (folder / sub).mkdir(parents=True)
    (folder / "prompt.md").write_text("fix it\n")
    (folder / "task.toml").write_text(manifest_text(Manifest(id="demo", description=awkward, graders=manifest.graders)))
    assert load_task(folder).manifest.description == awkward


def test_steps_and_hacks_read_back():
    steps = tomllib.loads(steps_text([[{"tool": "bash", "args": {"command": "echo 'hi'\nexit 0"}}], "done"],
                                     header=["the control"]))
    assert steps == {"steps": [{"calls": [{"tool": "bash", "args": {"command": "echo 'hi'\nexit 0"}}]},
                               {"say": "done"}]}
    assert tomllib.loads(hack_text({"description": "d", "base": "fixture", "delete": [], "caught_by": "holdout"})) == {
        "description": "d", "base": "fixture", "delete": [], "caught_by": "holdout"}
