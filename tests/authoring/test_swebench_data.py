"""SWE-bench's datasets as published: parquet, a JSON list, JSONL, a dataset name; and a slice of one.

tests/data/swebench/verified-slice.parquet holds four records of SWE-bench Verified's test.parquet,
unchanged (its v5 columns eval_script, log_parser, eval_type and image included): astropy 12907,
django 11099, sphinx 8459 and sympy 24562.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from cli_runner import run_endstate

from endstate.authoring._swebench import Instance, read_instances
from endstate.authoring._swebenchdata import Selection, dataset_records
from endstate.errors import UserError

SLICE = Path(__file__).resolve().parents[1] / "data" / "swebench" / "verified-slice.parquet"
IDS = ["astropy__astropy-12907", "django__django-11099", "sphinx-doc__sphinx-8459", "sympy__sympy-24562"]
PYTEST_IDS = Selection(ids=("astropy__astropy-12907", "sphinx-doc__sphinx-8459"))


def test_every_record_of_the_published_parquet_decodes_with_its_v5_columns():
    records = dataset_records(SLICE)
    assert [r.value["instance_id"] for r in records] == IDS
    assert [r.where for r in records] == [f"{SLICE} record {n}" for n in range(1, 5)]
    for record in records:
        instance = msgspec.convert(record.value, type=Instance)
        assert instance.image == f"swebench/sweb.eval.x86_64.{instance.instance_id.replace('__', '_1776_')}:latest"
        assert instance.log_parser.startswith("parse_log_") and instance.eval_type == "pass_and_fail"
        assert instance.eval_script.startswith("#!/bin/bash") and instance.base_commit in instance.eval_script
    [(number, astropy)], bad = read_instances(SLICE, select=Selection(ids=("astropy__astropy-12907",)))
    assert bad == [] and number == 1 and astropy.log_parser == "parse_log_astropy" and astropy.version == "4.3"


def test_a_json_list_and_jsonl_of_the_same_records_give_the_same_instances(tmp_path):
    values = [r.value for r in dataset_records(SLICE, select=PYTEST_IDS)]
    listed, lines = tmp_path / "x.json", tmp_path / "x.data"  # read as what it holds, whatever its name
    listed.write_text(json.dumps(values, indent=1))
    lines.write_text("\n".join(json.dumps(v) for v in values) + "\n")
    expected = [i for _, i in read_instances(SLICE, select=PYTEST_IDS)[0]]
    for source, place in ((listed, "record"), (lines, "line")):
        instances, bad = read_instances(source)
        assert bad == [] and [i for _, i in instances] == expected and [n for n, _ in instances] == [1, 2]
        assert [r.where for r in dataset_records(source)] == [f"{source} {place} 1", f"{source} {place} 2"]


def test_a_slice_is_the_ids_asked_for_the_ids_a_pattern_matches_or_the_repositories_named():
    def ids(select: Selection) -> list[str]:
        return [r.value["instance_id"] for r in dataset_records(SLICE, select=select)]

    assert ids(Selection(ids=("sympy__sympy-24562", "astropy__astropy-12907"))) == [IDS[0], IDS[3]]
    assert ids(Selection(pattern=r"-1\d{4}$")) == [IDS[0], IDS[1]]
    assert ids(Selection(repos=("django/django", "sympy/sympy"))) == [IDS[1], IDS[3]]
    assert ids(Selection(pattern="sphinx|sympy", repos=("sympy/sympy",))) == [IDS[3]]
    _, bad = read_instances(SLICE, select=Selection(ids=("astropy__astropy-12907", "astropy__astropy-1")))
    assert [b.reason for b in bad] == [f"--instance astropy__astropy-1: {SLICE} holds no instance of that id"]
    # An instance asked for that is there but does not decode is said once, for what is wrong with it.
    _, bad = read_instances(SLICE, select=Selection(ids=("django__django-11099",)))
    assert len(bad) <= 1 and all(b.reason.startswith(f"{SLICE} record 2 (instance django__django-11099): ") for b in bad)
    with pytest.raises(UserError, match=r"--filter '\(' is not a regular expression"):
        dataset_records(SLICE, select=Selection(pattern="("))


def test_a_source_that_cannot_be_read_says_so_in_one_line(tmp_path):
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 and not much else")
    (tmp_path / "object.json").write_text("[1, 2")
    for source, message in ((tmp_path / "broken.parquet", r"broken.parquet: not a readable parquet file \("),
                            (tmp_path / "object.json", r"object.json: not a JSON list of instances, nor one"),
                            (tmp_path / "missing.parquet", r"missing.parquet: no such file$"),
                            (tmp_path, r"is a folder with no file of split test \(test.parquet or "
                                       r"data/test-\*.parquet\): give the dataset's file")):
        with pytest.raises(UserError, match=message):
            dataset_records(source)


def test_a_dataset_folder_stands_for_its_splits_file(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dev-00000-of-00001.parquet").write_bytes(SLICE.read_bytes())
    assert [r.where for r in dataset_records(tmp_path, split="dev")][:1] == \
        [f"{tmp_path}/data/dev-00000-of-00001.parquet record 1"]
    (tmp_path / "dev.parquet").write_bytes(SLICE.read_bytes())
    with pytest.raises(UserError, match="is a folder with more than one file of split dev"):
        dataset_records(tmp_path, split="dev")


def test_a_parquet_file_without_pyarrow_says_what_to_install(tmp_path):
    ran = run_endstate("tasks", "import", "swebench", str(SLICE), "--repos", str(tmp_path), without="pyarrow")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran
    assert ran.stderr.strip() == (f"endstate: error: {SLICE} is a parquet file: reading it needs pyarrow "
                                  "(pip install 'endstate[swebench]')")


def test_a_dataset_name_says_in_one_line_why_it_cannot_be_had(tmp_path):
    name = "SWE-bench/SWE-bench_Verified"
    ran = run_endstate("tasks", "import", "swebench", name, "--repos", str(tmp_path), without="datasets")
    assert ran.returncode == 2 and len(ran.stderr.strip().splitlines()) == 1, ran
    assert f"{name}: no such file, and a dataset name is read through the `datasets` library, which is not " \
           "installed (pip install 'endstate[swebench]')" in ran.stderr
    # Installed, with the Hub out of reach (offline here: as with no network, without its retries).
    offline = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    ran = run_endstate("tasks", "import", "swebench", name, "--split", "test", "--repos", str(tmp_path), env=offline)
    assert ran.returncode == 2 and len(ran.stderr.strip().splitlines()) == 1 and "Traceback" not in ran.stderr, ran
    assert ran.stderr.startswith(f"endstate: error: dataset {name} (split test) cannot be loaded through the "
                                 "datasets library: ")
    assert "download its parquet file elsewhere and give the file" in ran.stderr


def test_each_instance_gets_a_line_as_it_is_settled_and_the_run_a_summary(tmp_path):
    (tmp_path / "repos").mkdir()
    ran = run_endstate("tasks", "import", "swebench", str(SLICE), "--repos", str(tmp_path / "repos"), "--out",
                       str(tmp_path / "out"), "--filter", "astropy|sphinx", "--instance", "sphinx-doc__sphinx-8459",
                       "--instance", "astropy__astropy-12907", "--instance", "flask-1", "-j", "1", "--no-adequacy")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran
    lines = ran.stdout.splitlines()
    assert lines[0] == f"refused  flask-1  0 s  --instance flask-1: {SLICE} holds no instance of that id"
    assert lines[1].startswith("refused  astropy__astropy-12907  0 s  no clone of astropy/astropy under ")
    assert lines[2].startswith("refused  sphinx-doc__sphinx-8459  0 s  no clone of sphinx-doc/sphinx under ")
    repos = tmp_path / "repos"
    assert lines[3] == (f"checked out 0 of 3; refused: 1 --instance flask-1; 1 no clone of astropy/astropy under "
                        f"{repos}; 1 no clone of sphinx-doc/sphinx under {repos}")


def test_the_summary_counts_the_refused_by_cause():
    from endstate.authoring._swebench import ImportReport, Skipped
    from endstate.cli._import import cause_of, summary

    report = ImportReport(written=["a", "b"], skipped=[
        Skipped(3, "c", "instance c: field `patch` does not apply at base_commit: hunk 1 (`@@ -1 +1 @@`) of x.py ..."),
        Skipped(4, "d", "instance d does not check out: solution: expected pass, got fail (tests_pass: ...)"),
        Skipped(5, "e", "instance e does not check out: solution: expected pass, got error (ImportError)"),
        Skipped(6, "f", "x.jsonl line 6 (instance f): field `FAIL_TO_PASS`: Expected `str | array`, got `int`"),
    ])
    assert cause_of(report.skipped[3].reason, "f") == "field `FAIL_TO_PASS`: Expected `str | array`, got `int`"
    assert summary(report) == ("checked out 2 of 6; refused: 2 does not check out (solution); 1 field "
                               "`FAIL_TO_PASS`: Expected `str | array`, got `int`; 1 field `patch` does not apply at "
                               "base_commit")
    # What differs from one instance to the next is left out, so that one cause is counted once.
    assert {cause_of(f"instance {i}: field `FAIL_TO_PASS`: {n} node id(s) name no test the task's image collects: "
                     f"test_x.py::test_{i} (nearest: ...)", i) for i, n in (("a", 8), ("b", 1))} == \
        {"field `FAIL_TO_PASS`: N node id(s) name no test the task's image collects"}
    assert {cause_of(f"x.jsonl line {n} (instance {i}): field `FAIL_TO_PASS` holds '{t}', which is not a pytest "
                     "node id (path/to/test_x.py::name)", i) for n, i, t in ((1, "a", "test_a (m.T)"), (2, "b", "t"))} \
        == {"field `FAIL_TO_PASS` holds an id, which is not a pytest node id"}
    # A test the gold fix fails in the sandbox: one cause whichever test it is.
    assert {cause_of(f"instance {i}: test t.py::T::test_{i}{more} needs the network{host}, which the sandbox "
                     "does not have", i) for i, more, host in (("a", "", " (httpbin.org)"),
                                                               ("b", " (and 5 more of FAIL_TO_PASS)", ""))} == \
        {"a test needs the network, which the sandbox does not have"}  # with the host it names or none
    assert {cause_of(f"instance {i}: field `PASS_TO_PASS`: the gold patch fails t.py::test_{i}{more} in the task's "
                     "image: AssertionError: x", i) for i, more in (("a", ""), ("b", " (and 2 more)"))} == \
        {"field `PASS_TO_PASS`: the gold patch fails a test in the task's image"}


def test_a_base_commit_that_passes_its_records_tests_is_said_so_in_the_refusal():
    """requests 863 and 1724: FAIL_TO_PASS lists tests SWE-bench's run of the base commit saw fail against
    httpbin.org, none the fix's; the fixture passes them, so an empty patch would. The line says so."""
    from endstate.checks._check import CheckRow, TaskCheck
    from endstate.cli._import import _PASSING_BASE, cause_of, why_not

    check = TaskCheck("psf__requests-863", rows=[
        CheckRow("fixture", "fail", "pass", note="every grader passed"), CheckRow("solution", "pass", "pass", ok=True),
        CheckRow("hack:special-case", "fail", "pass", note="expected holdout to catch it")])
    said = why_not(check, _PASSING_BASE)
    assert said == (f"fixture: expected fail, got pass ({_PASSING_BASE}); "
                    "hack:special-case: expected fail, got pass (expected holdout to catch it)")
    assert why_not(check) == ("fixture: expected fail, got pass (every grader passed); "
                              "hack:special-case: expected fail, got pass (expected holdout to catch it)")
    # a fixture that errs is not one that passes
    erring = TaskCheck("t", rows=[CheckRow("fixture", "fail", "error", note="ImportError")])
    assert why_not(erring, _PASSING_BASE) == "fixture: expected fail, got error (ImportError)"
    assert cause_of(f"instance t does not check out: {said}", "t") == "does not check out (fixture)"
