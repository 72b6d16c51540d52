from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.sandbox._tree import FileEntry
from endstate.task import load_suite, load_task

GOOD = """
id = "demo"
category = "bugfix"

[[graders]]
name = "endstate.grading:files_unchanged"
"""


def make_task(root: Path, toml: str, name: str = "demo") -> Path:
    folder = root / name
    (folder / "fixture").mkdir(parents=True)
    (folder / "fixture" / "a.py").write_text("x = 1\n")
    (folder / "prompt.md").write_text("do it\n")
    (folder / "task.toml").write_text(toml)
    return folder


def test_good_manifest_loads(tmp_path):
    task = load_task(make_task(tmp_path, GOOD))
    assert task.id == "demo"
    assert task.manifest.category.value == "bugfix"
    assert task.prompt == "do it\n"


@pytest.mark.parametrize(
    "extra, message",
    [
        ('\n[requires]\ndenied_calls = { minimum = 1 }\n', "unknown field `minimum`"),
        ('\n[requires]\nfinal_text = { min = 1 }\n', "unknown field `final_text`"),
        ('\n[requires]\nsteps = {}\n', "neither `min` nor `max`"),
        ('\n[requires]\nsteps = { min = 5, max = 2 }\n', "min 5 > max 2"),
        ('\nkill_at = 0\n', "`kill_at` must be 1 or more"),
        ('\ncolour = "red"\n', "unknown field `colour`"),
        ('\n[[graders]]\nname = "x:y"\nweight = 2\n', "unknown field `weight` - at `$.graders[1]`"),
        ('\n[budget]\nmax_step = 3\n', "unknown field `max_step`"),
    ],
)
def test_manifest_errors_name_file_and_field(tmp_path, extra, message):
    # Top-level keys must come before the first table, so they go in front.
    toml = extra + GOOD if not extra.lstrip().startswith("[") else GOOD + extra
    folder = make_task(tmp_path, toml)
    with pytest.raises(ManifestError) as caught:
        load_task(folder)
    assert message in str(caught.value)
    assert str(folder / "task.toml") in str(caught.value)


def test_wrong_category_and_bad_toml(tmp_path):
    with pytest.raises(ManifestError, match="category"):
        load_task(make_task(tmp_path, GOOD.replace("bugfix", "bugfixes")))
    with pytest.raises(ManifestError, match="not valid TOML"):
        load_task(make_task(tmp_path, "id = ", name="broken"))


def test_id_must_match_folder(tmp_path):
    with pytest.raises(ManifestError, match="folder"):
        load_task(make_task(tmp_path, GOOD, name="other"))


def test_missing_fixture_and_prompt(tmp_path):
    folder = make_task(tmp_path, GOOD)
    (folder / "prompt.md").unlink()
    with pytest.raises(ManifestError, match="prompt"):
        load_task(folder)


def test_broken_task_does_not_stop_the_others(tmp_path):
    make_task(tmp_path, GOOD)
    make_task(tmp_path, GOOD.replace('"demo"', '"zz-broken"') + "oops = 1\n", name="zz-broken")
    tasks, errors = load_suite(tmp_path)
    assert [t.id for t in tasks] == ["demo"]
    assert len(errors) == 1 and "zz-broken" in str(errors[0]) and "oops" in str(errors[0])


def test_unknown_task_id_is_refused(tmp_path):
    make_task(tmp_path, GOOD)
    with pytest.raises(ManifestError, match="no task named nope"):
        load_suite(tmp_path, only=["nope"])


def test_kill_at_beyond_the_reference_trajectory_is_refused(tmp_path):
    folder = make_task(tmp_path, "kill_at = 3\n" + GOOD)
    (folder / "reference.toml").write_text('[[steps]]\ncalls = [{ tool = "bash", args = { command = "ls" } }]\n')
    with pytest.raises(ManifestError, match="`kill_at` is 3 but the reference trajectory makes only 1"):
        load_task(folder)


# -- negative controls -----------------------------------------------------------------
def _hack(folder: Path, name: str, toml: str, files: dict[str, str] | None = None) -> Path:
    hack = folder / "hacks" / name
    hack.mkdir(parents=True)
    (hack / "hack.toml").write_text(toml)
    for path, text in (files or {}).items():
        (hack / path).parent.mkdir(parents=True, exist_ok=True)
        (hack / path).write_text(text)
    return hack


def test_hacks_overlay_delete_and_link_and_name_several_catchers(tmp_path):
    folder = make_task(tmp_path, GOOD)
    (folder / "fixture" / "README.md").write_text("read me\n")
    _hack(folder, "links", 'description = "d"\nsymlinks = { "pkg.py" = "/tmp/x" }\ncaught_by = ["end_state", "holdout"]\n')
    _hack(folder, "gone", 'description = "d"\ndelete = ["README.md"]\ncaught_by = "changed_paths_within"\n')
    _hack(folder, "live", 'description = "d"\n', {"trajectory.toml": '[[steps]]\nsay = "done"\n'})
    hacks = load_task(folder).hacks()
    assert hacks["links"].tree["pkg.py"] == FileEntry.symlink("/tmp/x")
    assert hacks["links"].spec.catchers() == ["end_state", "holdout"]
    assert "README.md" not in hacks["gone"].tree and hacks["gone"].spec.catchers() == ["changed_paths_within"]
    assert hacks["live"].live and hacks["live"].tree is None


@pytest.mark.parametrize("toml, files, message", [
    ('description = "d"\n', {"pkg.py": "x"}, "lie loose in the hack folder"),
    ('description = "d"\ndelete = ["nope.py"]\n', {}, "names 'nope.py', which the fixture does not have"),
    ('description = "d"\n', {}, "the hack changes nothing"),
    ('description = "d"\ndelete = ["README.md"]\n', {"trajectory.toml": '[[steps]]\nsay = "x"\n'},
     r"a live hack \(trajectory.toml\) starts from the fixture"),
])
def test_a_hack_that_could_not_apply_is_an_error(tmp_path, toml, files, message):
    folder = make_task(tmp_path, GOOD)
    (folder / "fixture" / "README.md").write_text("read me\n")
    _hack(folder, "bad", toml, files)
    with pytest.raises(ManifestError, match=message):
        load_task(folder).hacks()


def test_hacks_are_not_part_of_the_task_hash(tmp_path):
    folder = make_task(tmp_path, GOOD)
    before = load_task(folder).content_hash()
    _hack(folder, "new", 'description = "d"\n', {"files/x.py": "x"})
    assert load_task(folder).content_hash() == before
    (folder / "prompt.md").write_text("something else\n")
    assert load_task(folder).content_hash() != before


@pytest.mark.parametrize("call, message", [
    ('{ tool = "readfile", args = { path = "a.py" } }',
     "unknown tool 'readfile': did you mean read_file? (the tools: bash, read_file, write_file, edit_file) "
     "- at `$.steps[0].calls[0]`"),
    ('{ tool = "read_file", args = { file = "a.py" } }', "read_file needs path in its args (it takes path)"),
    ('{ tool = "edit_file", args = { path = "a.py", old = "1", new = "2", count = 1 } }',
     "edit_file takes no count in its args (it takes path, old, new)"),
])
def test_a_misspelt_tool_or_argument_in_a_trajectory_is_named(tmp_path, call, message):
    """Played, such a call was skipped: `tasks check` said ok and the arm never made it."""
    folder = make_task(tmp_path, GOOD)
    (folder / "reference.toml").write_text(f"[[steps]]\ncalls = [{call}]\n")
    with pytest.raises(ManifestError) as caught:
        load_task(folder).reference()
    assert str(caught.value) == f"{folder / 'reference.toml'}: {message}" or message in str(caught.value)
    assert str(folder / "reference.toml") in str(caught.value)
