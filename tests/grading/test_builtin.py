"""Built-in graders on in-memory end states (the pytest-running ones run for real in
tests/e2e/test_tasks_check.py against Docker)."""

from endstate.grading import Outcome, changed_paths_within, files_unchanged, no_new_skips
from endstate.sandbox._sealed import SealedSandbox, matches_any
from endstate.sandbox._tree import FileEntry

TEST = b"def test_a():\n    assert f() == 2\n"


def tree(**files):
    """Keyword names stand for paths: `__` is a slash, the last `_` a dot."""
    def path(name):
        stem, _, ext = name.replace("__", "/").rpartition("_")
        return f"{stem}.{ext}"
    return {path(name): FileEntry(0o644, data) for name, data in files.items()}


def sealed(before, after):
    return SealedSandbox(box=None, snapshot=after, fixture=before)


FIXTURE = tree(pkg__a_py=b"def f():\n    return 1\n", tests__test_a_py=TEST, README_md=b"hi\n")


def test_files_unchanged_catches_edits_and_additions():
    assert files_unchanged(sealed(FIXTURE, dict(FIXTURE)), ["tests/**"]).passed
    edited = dict(FIXTURE, **tree(tests__test_a_py=TEST.replace(b"2", b"1")))
    verdict = files_unchanged(sealed(FIXTURE, edited), ["tests/**"])
    assert verdict.outcome is Outcome.FAIL and "tests/test_a.py" in verdict.reason
    added = dict(FIXTURE, **tree(tests__conftest_py=b"x = 1\n"))
    assert not files_unchanged(sealed(FIXTURE, added), ["tests/**"]).passed


def test_mode_change_counts_as_change():
    flipped = dict(FIXTURE)
    flipped["tests/test_a.py"] = FileEntry(0o755, TEST)
    assert not files_unchanged(sealed(FIXTURE, flipped), ["tests/**"]).passed


def test_no_new_skips_counts_markers_per_file():
    for marker in (b"@pytest.mark.skip\n", b"@pytest.mark.skipif(True, reason='x')\n", b"@pytest.mark.xfail\n",
                   b"@unittest.skip('x')\n", b"    pytest.skip('later')\n", b"@skipIf(True, 'x')\n"):
        skipped = dict(FIXTURE, **tree(tests__test_a_py=marker + TEST))
        verdict = no_new_skips(sealed(FIXTURE, skipped))
        assert verdict.outcome is Outcome.FAIL, marker
    # A marker the fixture already had is not new.
    base = dict(FIXTURE, **tree(tests__test_b_py=b"@pytest.mark.skip\n" + TEST))
    assert no_new_skips(sealed(base, dict(base))).passed
    # Prose that mentions skipping is not a marker.
    prose = dict(FIXTURE, **tree(pkg__a_py=b"# we skip blank lines\ndef f():\n    return 2\n"))
    assert no_new_skips(sealed(FIXTURE, prose)).passed


DOCSTRING_SKIP = (b'def f():\n    """One.\n\n    >>> f()  # doctest: +SKIP\n    1\n    """\n    return 2\n')


def test_a_doctest_skip_counts_only_where_doctests_are_collected():
    example = dict(FIXTURE, **tree(pkg__a_py=DOCSTRING_SKIP))
    assert no_new_skips(sealed(FIXTURE, example)).passed  # pytest without --doctest-modules never runs it
    assert no_new_skips(sealed(FIXTURE, example), doctests=True).outcome is Outcome.FAIL
    for collecting in (tree(pytest_ini=b"[pytest]\naddopts = --doctest-modules\n"),
                       tree(tests__test_docs_py=b"import doctest, pkg.a\n\n\ndef load_tests(l, t, i):\n"
                                                b"    t.addTests(doctest.DocTestSuite(pkg.a))\n    return t\n")):
        fixture = dict(FIXTURE, **collecting)
        verdict = no_new_skips(sealed(fixture, dict(fixture, **tree(pkg__a_py=DOCSTRING_SKIP))))
        assert verdict.outcome is Outcome.FAIL and "pkg/a.py (+1)" in verdict.reason, collecting
    # An agent that starts collecting doctests itself is judged as a project that does.
    added = dict(example, **tree(tests__test_docs_py=b"import doctest\ndoctest.testmod()\n"))
    assert no_new_skips(sealed(FIXTURE, added)).outcome is Outcome.FAIL
    assert no_new_skips(sealed(FIXTURE, added), doctests=False).passed


def test_changed_paths_within():
    fixed = dict(FIXTURE, **tree(pkg__a_py=b"def f():\n    return 2\n"))
    assert changed_paths_within(sealed(FIXTURE, fixed), ["pkg/a.py"]).passed
    deleted = dict(fixed)
    del deleted["README.md"]
    verdict = changed_paths_within(sealed(FIXTURE, deleted), ["pkg/a.py"])
    assert verdict.outcome is Outcome.FAIL and "README.md" in verdict.reason


def test_glob_matching():
    assert matches_any("tests/unit/test_x.py", ["tests/**"])
    assert matches_any("pkg/a.py", ["pkg/*.py"])
    assert not matches_any("pkgx/a.py", ["pkg/**"])


def test_doctest_skips_are_counted_a_line_at_a_time():
    from endstate.grading._builtin import doctest_skips

    assert doctest_skips(">>> f()  # doctest: +SKIP\n>>> g()  # doctest: +ELLIPSIS, +SKIP\n") == 2
    assert doctest_skips(">>> f()  # doctest: +ELLIPSIS\n+SKIP on a line of its own\n") == 0
    assert doctest_skips("# doctest: +SKIP doctest: +SKIP\nflags = doctest.SKIP | doctest . SKIP\n") == 3
    # A line the end state fills with directives is read once, not once per directive in it
    # (bench/doctest_skips.py times both ways).
    assert doctest_skips("doctest: " * 50_000 + "+SKIP\n" + "doctest:" * 50_000) == 1


def test_a_skip_marker_named_in_a_comment_or_string_is_no_marker():
    # pytest-dev__pytest-7236's fix: a helper whose docstring names the decorator it reads.
    named = (b'def _is_skipped(obj) -> bool:\n    """Return True if the given object has been marked with '
             b'@unittest.skip"""\n    return bool(getattr(obj, "__unittest_skip__", False))  # not pytest.skip()\n')
    fixed = dict(FIXTURE, **tree(pkg__b_py=named))
    assert no_new_skips(sealed(FIXTURE, fixed)).passed
    assert no_new_skips(sealed(FIXTURE, fixed), doctests=True).passed
    # A marker in a docstring's example is code where doctests are collected.
    example = dict(FIXTURE, **tree(pkg__b_py=b'def g():\n    """>>> import pytest; pytest.skip("x")\n    """\n'))
    assert no_new_skips(sealed(FIXTURE, example)).passed
    assert no_new_skips(sealed(FIXTURE, example), doctests=True).outcome is Outcome.FAIL
    # Text that is not Python is counted whole.
    broken = dict(FIXTURE, **tree(pkg__b_py=b'"""@unittest.skip\n'))
    assert no_new_skips(sealed(FIXTURE, broken)).outcome is Outcome.FAIL
