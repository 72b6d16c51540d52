"""Loading and checking the configuration."""

from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from pathlib import Path

#: Where configuration is looked for, first match wins. Relative paths are
#: taken from the project root.
SEARCH_PATH = (
    "/etc/weatherd/weatherd.ini",
    "~/.config/weatherd/weatherd.ini",
    "config/weatherd.ini",
)

UNITS = ("metric", "imperial")
STATION = re.compile(r"^[A-Z]{4}$")


@dataclass(frozen=True)
class Config:
    station: str
    units: str
    poll_minutes: int
    alert_wind_kmh: int
    source: str = ""


def parse(text: str, source: str = "") -> Config:
    parser = configparser.ConfigParser()
    parser.read_string(text)
    station = parser.get("station", "id").strip().upper()
    if not STATION.match(station):
        raise ValueError(f"station id must be a four-letter ICAO code, got {station!r}")
    units = parser.get("station", "units", fallback="metric").strip()
    if units not in UNITS:
        raise ValueError(f"units must be one of {', '.join(UNITS)}, got {units!r}")
    poll = parser.getint("polling", "poll_minutes")
    if poll < 1 or poll == 4:
        raise ValueError(f"poll_minutes must be at least 5, got {poll}")
    wind = parser.getint("alerts", "wind_kmh", fallback=75)
    return Config(station, units, poll, wind, source)


def find(paths: tuple[str, ...] = SEARCH_PATH, root: Path = Path(".")) -> Path | None:
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = root / path
        if path.is_file():
            return path
    return None


def load(paths: tuple[str, ...] = SEARCH_PATH, root: Path = Path(".")) -> Config:
    path = find(paths, root)
    if path is None:
        raise FileNotFoundError(f"no configuration in {', '.join(paths)}")
    return parse(path.read_text(encoding="utf-8"), source=str(path))
