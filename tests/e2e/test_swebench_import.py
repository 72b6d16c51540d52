"""`endstate tasks import swebench` on the shipped SWE-bench-format file, in real sandboxes.

tests/data/swebench holds three real boltons fixes (instances.jsonl) and the trees
they start from (boltons.bundle); see tests/data/swebench/README.md.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from endstate.task import load_suite

from e2e_helpers import ROOT, endstate

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DATA = ROOT / "tests" / "data" / "swebench"


def test_the_shipped_instances_become_checked_tasks_and_broken_ones_are_listed(tmp_path):
    repos = tmp_path / "repos"
    subprocess.run(["git", "clone", "-q", "--bare", str(DATA / "boltons.bundle"), str(repos / "mahmoud__boltons.git")],
                   check=True)
    lines = (DATA / "instances.jsonl").read_text().splitlines()
    good = [json.loads(line)["instance_id"] for line in lines]
    unappliable = dict(json.loads(lines[1]), instance_id="broken-patch",
                       patch=json.loads(lines[1])["patch"].replace("yield [src]", "yield [source]"))
    # A regression test that already passes at base_commit: the fixture would PASS.
    passing = json.loads(json.loads(lines[1])["PASS_TO_PASS"])
    inert = dict(json.loads(lines[1]), instance_id="inert-holdout", FAIL_TO_PASS=json.dumps(passing[:1]))
    source = tmp_path / "instances.jsonl"
    source.write_text("\n".join(lines + [json.dumps(unappliable), json.dumps(inert)]) + "\n")

    ran = endstate("tasks", "import", "swebench", str(source), "--repos", str(repos), "--out", str(tmp_path / "out"),
                   "-j", "2")

    assert ran.code == 1, ran
    assert "3 task(s) written" in ran.out and "2 instance(s) not written" in ran.out, ran
    assert "Traceback" not in ran.err
    rows = {line.split()[1]: line for line in ran.out.splitlines() if line.startswith(("ok   ", "FAIL "))}
    assert sorted(rows) == sorted(good + ["inert-holdout"]) and rows["inert-holdout"].startswith("FAIL "), ran
    for instance in good:  # fixture FAIL, solution PASS, every hack FAIL caught by its grader, reference reaches it
        assert rows[instance].startswith(f"ok   {instance:40s} fixture=fail[holdout], solution=pass, "
                                         "hack:delete-unrelated=fail[changed_paths_within], "
                                         "hack:edit-tests=fail[files_unchanged], hack:skip-failing=fail[no_new_skips], "
                                         "hack:special-case=fail[holdout], "), ran
        assert rows[instance].endswith("reference=solution"), ran
    assert ("not written: instance broken-patch: field `patch` does not apply at base_commit: hunk 1 "
            "(`@@ -158,7 +158,7 @@ def split_iter(src, sep=None, maxsplit=None):`) of boltons/iterutils.py does not "
            "apply: line 161 is '            yield [src]' where the diff expects '            yield [source]'") in ran.err
    assert "not written: instance inert-holdout does not check out: fixture: expected fail, got pass" in ran.err
    tasks, errors = load_suite(tmp_path / "out")
    assert not errors and sorted(t.id for t in tasks) == sorted(good)  # nothing left of the two not written


def test_an_instance_whose_tests_need_a_declared_dependency_gets_an_image_of_its_own(tmp_path):
    """The second shipped instance, at a base where boltons declares `six` and its conftest
    imports it: the default image has no six, so the task checks out only in an image of its
    own, built offline from the wheels the import pins."""
    clone = tmp_path / "repos" / "mahmoud__boltons"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(DATA / "boltons.bundle"), str(clone)], check=True)
    raw = json.loads((DATA / "instances.jsonl").read_text().splitlines()[1])
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", raw["base_commit"]], check=True)
    pyproject = clone / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('requires-python = ">=3.7"\n',
                                                       'requires-python = ">=3.7"\ndependencies = ["six"]\n', 1))
    with open(clone / "tests" / "conftest.py", "a") as conftest:
        conftest.write("\nimport six  # noqa: F401 (the tests need the project's declared dependency)\n")
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-q", "-am",
                    "boltons needs six"], check=True)
    base = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(dict(raw, instance_id="needs-six", base_commit=base)) + "\n")

    ran = endstate("tasks", "import", "swebench", str(source), "--repos", str(tmp_path / "repos"),
                   "--out", str(tmp_path / "out"))

    assert ran.code == 0 and "1 task(s) written" in ran.out, ran
    row = next(line for line in ran.out.splitlines() if line.startswith(("ok   ", "FAIL ")))
    assert row.startswith("ok   needs-six") and "fixture=fail[holdout], solution=pass" in row, ran
    assert row.endswith("reference=solution"), ran
    task = tmp_path / "out" / "needs-six"
    assert '[sandbox]\ndockerfile = "image/Dockerfile"' in (task / "task.toml").read_text()
    pinned = (task / "image" / "requirements.txt").read_text().splitlines()
    assert [line.split("==")[0] for line in pinned] == ["pip", "six"] and all("--hash=sha256:" in p for p in pinned)
