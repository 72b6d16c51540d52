from pathlib import Path

import pytest

from weatherd import config


def ini(poll):
    return f"[station]\nid = EHRD\n\n[polling]\npoll_minutes = {poll}\n"


@pytest.mark.parametrize("poll", [0, -3, 1, 4])
def test_too_fast_is_refused(poll):
    with pytest.raises(ValueError, match="poll_minutes"):
        config.parse(ini(poll))


@pytest.mark.parametrize("poll", [5, 6, 60])
def test_slow_enough_is_accepted(poll):
    assert config.parse(ini(poll)).poll_minutes == poll


def test_production_file_is_valid():
    loaded = config.load(("deploy/weatherd.production.ini",), Path("."))
    assert (loaded.station, loaded.poll_minutes, loaded.alert_wind_kmh) == ("EHRD", 10, 62)


def test_first_file_on_the_path_wins(tmp_path):
    (tmp_path / "a.ini").write_text(ini(20))
    (tmp_path / "b.ini").write_text(ini(30))
    assert config.load(("missing.ini", "a.ini", "b.ini"), tmp_path).poll_minutes == 20


def test_repo_default():
    assert config.load(("config/weatherd.ini",), Path(".")).poll_minutes == 10
