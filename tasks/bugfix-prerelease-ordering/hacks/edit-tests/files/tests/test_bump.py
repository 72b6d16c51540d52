import pytest

from pkgver import Version, bump


@pytest.mark.parametrize(
    "start, part, expected",
    [("1.4.2", "patch", "1.4.3"), ("1.4.2", "minor", "1.5.0"), ("1.4.2", "major", "2.0.0"), ("1.0.0-rc.1", "major", "1.0.0")],
)
def test_bump(start, part, expected):
    assert str(bump(start, part)) == expected


def test_bump_unknown_part():
    with pytest.raises(ValueError):
        bump("1.0.0", "micro")


def test_bumped_version_is_newer():
    start = Version.parse("1.0.0-rc.1")
    assert bump(start, "patch") != start
