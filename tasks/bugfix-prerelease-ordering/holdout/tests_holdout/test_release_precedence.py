from pkgver import Spec, Version, latest, sort_versions


def test_beta_is_older_than_its_release():
    assert Version.parse("2.3.0-beta.2") < Version.parse("2.3.0")
    assert not Version.parse("2.3.0-beta.2") > Version.parse("2.3.0")


def test_full_precedence_chain_ends_with_the_release():
    chain = ["3.1.0-alpha", "3.1.0-alpha.1", "3.1.0-beta", "3.1.0-beta.11", "3.1.0-rc.1", "3.1.0", "3.1.1-alpha"]
    versions = [Version.parse(v) for v in chain]
    assert sorted(reversed(versions)) == versions


def test_latest_picks_the_final_release():
    published = ["2.0.0-rc.1", "2.0.0", "2.0.0-rc.2", "1.9.9"]
    assert latest(published, include_prereleases=True) == Version(2, 0, 0)


def test_candidate_of_next_minor_beats_current_release():
    assert latest(["1.4.2", "1.5.0-rc.1"], include_prereleases=True) == Version.parse("1.5.0-rc.1")


def test_prerelease_fits_below_an_exclusive_bound():
    assert Spec("<0.5.0").allows("0.5.0-alpha", include_prereleases=True)
    assert not Spec(">0.5.0-alpha").allows("0.5.0-alpha")


def test_sort_descending():
    assert [str(v) for v in sort_versions(["0.2.0-rc.1", "0.2.0", "0.1.5"], reverse=True)] == ["0.2.0", "0.2.0-rc.1", "0.1.5"]
