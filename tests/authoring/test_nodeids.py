"""A dataset's node ids matched to those the task image's pytest collects (no sandbox needed)."""

from __future__ import annotations

import datetime

from endstate.authoring._nodeids import (
    _node_id,
    holds_the_clock,
    in_collected_order,
    match_ids,
    not_found_error,
    reported_ids,
    whole_files,
    with_whole_tests,
)

COLLECTED = ["tests/test_a.py::test_plain", "tests/test_a.py::TestK::test_m[\\xe9-1]",
             "tests/test_a.py::test_spaced[two words]", "tests/test_a.py::test_spaced[two words again]",
             "tests/test_a.py::test_url[http://x:-1]", "tests/test_b.py::test_other[a0]", "tests/test_b.py::test_other[a1]"]


def test_the_same_id_an_escaped_one_or_one_cut_at_a_space_maps_onto_the_test():
    wanted = ["tests/test_a.py::test_plain", "tests/test_a.py::TestK::test_m[\u00e9-1]",
              "tests/test_a.py::test_url['http://x:-1']", "tests/test_a.py::test_spaced[two words a"]
    mapped, missing = match_ids(wanted, COLLECTED)
    assert missing == []
    assert mapped == {wanted[0]: [COLLECTED[0]], wanted[1]: [COLLECTED[1]], wanted[2]: [COLLECTED[4]],
                      wanted[3]: [COLLECTED[3]]}


def test_an_id_cut_at_a_space_that_starts_two_tests_names_both():
    # SWE-bench's log parser cuts ids at a space: jinja2 3.1.3's PASS_TO_PASS holds
    # tests/test_filters.py::TestFilter::test_min_max[{{ for several cases of test_min_max.
    mapped, missing = match_ids(["tests/test_a.py::test_spaced[two"], COLLECTED)
    assert mapped == {"tests/test_a.py::test_spaced[two": [COLLECTED[2], COLLECTED[3]]} and missing == []


def test_an_id_that_names_no_test_is_not_guessed():
    mapped, missing = match_ids(["tests/test_b.py::test_other[a]", "tests/test_a.py::test_plan"], COLLECTED)
    assert mapped == {} and len(missing) == 2


def test_ids_not_found_are_named_with_the_nearest_that_exist():
    error = str(not_found_error(["tests/test_a.py::test_plan", "tests/test_c.py::test_x", "a", "b"], COLLECTED,
                                "PASS_TO_PASS", why="ERROR collecting tests/test_c.py: FileNotFoundError: data/x.toml"))
    assert error.startswith("field `PASS_TO_PASS`: 4 node id(s) name no test the task's image collects: ")
    assert "tests/test_a.py::test_plan (nearest: tests/test_a.py::test_plain, " in error
    assert ("tests/test_c.py::test_x (no test of tests/test_c.py was collected (ERROR collecting tests/test_c.py: "
            "FileNotFoundError: data/x.toml))") in error
    assert error.endswith(", and 1 more")


def test_a_file_that_cannot_be_collected_is_no_test_and_its_ids_say_why():
    # As pytest's JUnit report gives a collection error (requests under Python 3.11: `from collections
    # import Mapping`): a case with no class named after the module, with the error as its outcome.
    cases = [("", "test_requests", "error"), ("tests.test_b", "test_ok", "passed"), ("tests.test_b", "test_s", "skipped")]
    files = {"::test_requests": "test_requests.py", "tests.test_b::test_ok": "tests/test_b.py",
             "tests.test_b::test_s": "tests/test_b.py"}
    ids, ran = reported_ids(cases, files)
    assert ids == ["tests/test_b.py::test_ok", "tests/test_b.py::test_s"] and ran == {"tests/test_b.py::test_ok"}
    why = ("ections.py:1: in <module> |     from collections import Mapping, MutableMapping | E   ImportError: "
           "cannot import name 'Mapping' from 'collections' | ERROR test_requests.py")
    error = str(not_found_error(["test_requests.py::test_HTTP_200_OK_GET", "test_requests.py::test_links"], ids,
                                "FAIL_TO_PASS", why=why))
    assert error.endswith("test_requests.py::test_HTTP_200_OK_GET (no test of test_requests.py was collected ("
                          "ImportError: cannot import name 'Mapping' from 'collections')); "
                          "test_requests.py::test_links (nor of test_requests.py)"), error
    # The tail cut past the `E` line, a warning the project logs at the end (matplotlib's, on its freetype).
    why = ("ERROR lib/m/tests/test_axes.py - DeprecationWarning: pkg_resources is deprecated as an API | !!!!!!!! "
           "Interrupted: 1 error during collection !!!!!!!! | no tests collected, 1 error in 4.71s | Matplotlib is "
           "not built with the correct FreeType version to run tests.  " + "Expect many failures.  " * 9)
    error = str(not_found_error(["lib/m/tests/test_axes.py::test_bar"], [], "FAIL_TO_PASS", why=why))
    assert error.endswith("(no test of lib/m/tests/test_axes.py was collected (ERROR lib/m/tests/test_axes.py - "
                          "DeprecationWarning: pkg_resources is deprecated as an API))"), error


def test_a_conftest_that_cannot_be_imported_is_named_by_its_exception_not_the_frames_before_it():
    # sphinx-doc__sphinx-8056 under setuptools 82 (no pkg_resources): pytest prints the traceback of the
    # conftest's plugin with no `E   ` line, the exception last; 300 characters from the end cut it off.
    frames = " | ".join(f'  File "/w/sphinx/m{n}.py", line {n}, in <module> |     from sphinx import m{n}'
                        for n in range(12))
    why = (f"ImportError while loading conftest '/w/tests/conftest.py'. | Traceback: | {frames} | "
           "ImportError: Error importing plugin \"sphinx.testing.fixtures\": No module named 'pkg_resources'")
    error = str(not_found_error(["tests/test_ext.py::test_x"], [], "FAIL_TO_PASS", why=why))
    assert error.endswith("(no test of tests/test_ext.py was collected (ImportError: Error importing plugin "
                          "\"sphinx.testing.fixtures\": No module named 'pkg_resources'))"), error


def test_a_report_case_is_named_by_its_file_and_classes():
    assert _node_id("tests.test_a.TestK.Inner", "test_m[1]", "tests/test_a.py") == "tests/test_a.py::TestK::Inner::test_m[1]"
    assert _node_id("tests.test_a", "test_plain", "tests/test_a.py") == "tests/test_a.py::test_plain"


def test_a_file_whose_every_test_is_named_is_given_as_the_file_and_the_others_by_id():
    # attrs 23.1.0 -> 23.2.0 lists 1242 FAIL_TO_PASS ids: as ids, a command over the 128 KiB of one argument.
    named = ["tests/test_a.py::test_plain", "tests/test_b.py::test_other[a1]", "tests/test_b.py::test_other[a0]"]
    assert whole_files(named, COLLECTED) == ["tests/test_a.py::test_plain", "tests/test_b.py"]
    assert whole_files(COLLECTED, COLLECTED) == ["tests/test_a.py", "tests/test_b.py"]
    assert whole_files([], COLLECTED) == []


def test_a_case_named_by_its_parameter_and_index_is_the_case_at_that_index():
    # tomlkit's test_parse_rejects_deeply_nested_documents: a newer pytest names its cases of 500-deep
    # payloads [payload0]..[payload5], pytest 7 by the payloads themselves.
    collected = [f"tests/test_api.py::test_deep[x = {'[' * 40}{i}]" for i in range(3)] + ["tests/test_api.py::test_z"]
    mapped, missing = match_ids(["tests/test_api.py::test_deep[payload2]", "tests/test_api.py::test_deep[payload3]"],
                                collected)
    assert mapped == {"tests/test_api.py::test_deep[payload2]": [collected[2]]}
    assert missing == ["tests/test_api.py::test_deep[payload3]"]  # no fourth case: not guessed


def test_cases_whose_ids_held_a_path_of_the_datasets_machine_pair_with_those_no_id_names():
    # requests' test_unzipped_paths_unchanged is parametrised by module paths of where it ran.
    collected = ["t.py::test_paths[/usr/lib/a.py]", "t.py::test_paths[/usr/lib/b.py]", "t.py::test_paths[/]"]
    wanted = ["t.py::test_paths[/venv/a.py]", "t.py::test_paths[/venv/b.py]"]
    mapped, missing = match_ids(wanted, collected, claimed=["t.py::test_paths[/]"])
    assert mapped == {wanted[0]: [collected[0]], wanted[1]: [collected[1]]} and missing == []
    # one case left for two ids: nothing is guessed
    assert match_ids(wanted, collected, claimed=["t.py::test_paths[/]", collected[0]])[1] == wanted


def test_a_test_whose_every_case_is_named_is_given_as_the_test():
    # requests' test_unzipped_paths_unchanged[<__file__>]: the case's id holds each run's scratch path.
    named = ["tests/test_a.py::test_spaced[two words]", "tests/test_a.py::test_spaced[two words again]",
             "tests/test_a.py::TestK::test_m[\\xe9-1]"]
    assert whole_files(named, COLLECTED) == ["tests/test_a.py::test_spaced", "tests/test_a.py::TestK::test_m"]
    assert whole_files(named[:1], COLLECTED) == named[:1]


def test_ids_run_in_the_order_pytest_collects_them_not_the_datasets():
    # A dataset lists its ids sorted; pydicom's tests leave state behind and fail in that order.
    named = ["tests/test_b.py::test_other[a0]", "tests/test_a.py::test_url[http://x:-1]", COLLECTED[0], COLLECTED[0]]
    assert in_collected_order(named, COLLECTED) == [COLLECTED[0], COLLECTED[4], COLLECTED[5]]


def test_a_case_named_by_the_clock_of_the_datasets_run_is_the_one_case_of_its_shape():
    # marshmallow parametrises test_invalid_datetime_deserialization by datetime.now() in two formats;
    # the dataset's ids (cut at a space) hold its run's time and date, the image's another.
    test = "tests/test_d.py::TestF::test_invalid"
    collected = [f"{test}[2018]", f"{test}[2018-01-01]", f"{test}[18:02:33 2026-12-05]", f"{test}[12-05-2026 18:02:33]",
                 "tests/test_d.py::test_other"]
    mapped, missing = match_ids([f"{test}[15:11:18"], collected, claimed=[f"{test}[12-04-2026", f"{test}[2018]"])
    assert mapped == {f"{test}[15:11:18": [collected[2]]} and missing == []
    mapped, missing = match_ids([f"{test}[12-04-2026", f"{test}[2018-01-01]"], collected, claimed=[f"{test}[15:11:18"])
    assert mapped == {f"{test}[12-04-2026": [collected[3]], f"{test}[2018-01-01]": [collected[1]]} and missing == []


def test_a_shape_that_two_free_cases_have_is_not_guessed_and_names_the_tests_own_cases():
    test = "tests/test_d.py::test_when"
    collected = [f"{test}[10:00:00]", f"{test}[11:00:00]", "tests/test_d.py::test_whence"]
    mapped, missing = match_ids([f"{test}[09:59:59]"], collected, claimed=[f"{test}[08:00:00]", f"{test}[07:00:00]"])
    assert mapped == {} and missing == [f"{test}[09:59:59]"]
    error = str(not_found_error(missing, collected, "FAIL_TO_PASS"))
    assert f"(nearest: {test}[10:00:00], {test}[11:00:00])" in error


def test_a_case_whose_id_holds_the_clock_of_the_run_is_run_as_its_whole_test():
    # Collected at 18:22:44 on 4 December 2026: the ids hold that time and that day, and the next run's won't.
    now = datetime.datetime(2026, 12, 4, 18, 22, 44)
    test = "tests/test_d.py::TestF::test_invalid"
    collected = [f"{test}[2018]", f"{test}[18:22:44 2026-12-04]", f"{test}[12-04-2026 18:22:44]",
                 "tests/test_d.py::test_rfc[Sun, 10 Nov 2013 01:23:45 -0000]", "tests/test_d.py::test_other"]
    assert [holds_the_clock(c, now) for c in collected] == [False, True, True, False, False]
    assert holds_the_clock(f"{test}[18:35:00]", now) and not holds_the_clock(f"{test}[19:00:00]", now)
    assert not holds_the_clock(f"{test}[2026-12-05]", now) and holds_the_clock(f"{test}[04/12/2026]", now)
    named = with_whole_tests([collected[1], collected[4]], collected, {collected[1]})
    assert named == [collected[0], collected[1], collected[2], collected[4]]
    assert whole_files(named, collected) == [test, "tests/test_d.py::test_other"]
