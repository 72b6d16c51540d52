from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.suite import load_suite, load_task

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
