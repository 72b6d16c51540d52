"""files_unchanged(paths, allow_new=...): existing tests frozen, new ones welcome where the task says."""

from endstate.grading import Outcome, files_unchanged, no_new_skips
from endstate.grading import tests_pass as grade_tests_pass
from endstate.sandbox._sealed import SealedSandbox
from endstate.sandbox._tree import FileEntry

TEST = b"def test_a():\n    assert f() == 2\n"
FIXTURE = {
    "pkg/a.py": FileEntry(0o644, b"def f():\n    return 1\n"),
    "tests/test_a.py": FileEntry(0o644, TEST),
}


def sealed(**changes: bytes | None) -> SealedSandbox:
    after = dict(FIXTURE)
    for path, data in changes.items():
        path = path.replace("__", "/").replace("_py", ".py")
        if data is None:
            del after[path]
        else:
            after[path] = FileEntry(0o644, data)
    return SealedSandbox(box=None, snapshot=after, fixture=FIXTURE)


def grade(box: SealedSandbox, allow_new=("tests/**",)):
    return files_unchanged(box, ["tests/**"], allow_new=list(allow_new))


def test_a_new_test_file_is_allowed_where_allow_new_matches():
    box = sealed(tests__test_regression_py=b"def test_b():\n    assert f() == 2\n")
    assert grade(box).passed
    # Without allow_new the same file is a protected addition.
    assert not files_unchanged(box, ["tests/**"]).passed
    # allow_new that does not cover the file leaves it protected.
    verdict = grade(box, allow_new=["tests/new_*.py"])
    assert verdict.outcome is Outcome.FAIL and "tests/test_regression.py" in verdict.reason


def test_existing_protected_files_stay_byte_identical():
    edited = grade(sealed(tests__test_a_py=TEST.replace(b"2", b"1")))
    assert edited.outcome is Outcome.FAIL and "tests/test_a.py" in edited.reason
    deleted = grade(sealed(tests__test_a_py=None))
    assert deleted.outcome is Outcome.FAIL and "tests/test_a.py" in deleted.reason


def test_allowed_new_files_still_face_the_skip_and_config_checks():
    skipped = sealed(tests__test_new_py=b"import pytest\n\n@pytest.mark.skip\ndef test_b():\n    pass\n")
    assert grade(skipped).passed
    assert no_new_skips(skipped).outcome is Outcome.FAIL
    conftest = sealed(tests__conftest_py=b"collect_ignore = ['test_a.py']\n")
    assert grade(conftest).passed
    # The test graders refuse the run before anything executes (this sandbox has no live side).
    verdict = grade_tests_pass(conftest, "python -m pytest -q tests")
    assert verdict.outcome is Outcome.FAIL and "tests/conftest.py" in verdict.reason
