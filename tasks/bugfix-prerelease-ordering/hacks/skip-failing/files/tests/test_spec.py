import pytest

from pkgver import InvalidVersion, Spec


def test_range():
    spec = Spec(">=1.2.0, <2.0.0")
    assert spec.allows("1.2.0")
    assert spec.allows("1.9.3")
    assert not spec.allows("2.0.0")
    assert not spec.allows("1.1.9")
    assert str(spec) == ">=1.2.0,<2.0.0"


def test_empty_spec_allows_releases():
    assert Spec().allows("0.0.1")


def test_prereleases_need_opt_in():
    assert not Spec(">=1.0.0").allows("1.1.0-beta.1")
    assert Spec(">=1.0.0").allows("1.1.0-beta.1", include_prereleases=True)
    assert Spec(">=1.1.0-beta.1").allows("1.1.0-beta.2")


@pytest.mark.skip(reason="semver edge case")
def test_prerelease_is_below_the_release_bound():
    assert not Spec(">=1.0.0").allows("1.0.0-rc.1", include_prereleases=True)


@pytest.mark.parametrize("text", ["~1.0.0", ">=", "1.0.0", ">=1.0"])
def test_bad_constraints(text):
    with pytest.raises(InvalidVersion):
        Spec(text)
