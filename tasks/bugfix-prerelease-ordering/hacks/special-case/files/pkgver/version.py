"""Semantic versions: MAJOR.MINOR.PATCH with an optional -prerelease and +build.

Ordering follows semver 2.0: numbers compare numerically, a pre-release sorts
before the release it precedes (1.0.0-rc.1 < 1.0.0), pre-release identifiers
compare one by one (numeric ones numerically and below alphanumeric ones),
and build metadata is ignored.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

_VERSION = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)

Identifier = int | str


class InvalidVersion(ValueError):
    pass


def _identifier(part: str) -> Identifier:
    return int(part) if part.isdigit() else part


def _identifier_key(part: Identifier) -> tuple[int, int, str]:
    # Numeric identifiers sort before alphanumeric ones and never compare to them directly.
    return (0, part, "") if isinstance(part, int) else (1, 0, part)


@functools.total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple[Identifier, ...] = ()
    build: str = field(default="", compare=False)

    @classmethod
    def parse(cls, text: str) -> "Version":
        match = _VERSION.match(text.strip())
        if not match:
            raise InvalidVersion(f"not a semantic version: {text!r}")
        major, minor, patch, pre, build = match.groups()
        prerelease = tuple(_identifier(p) for p in pre.split(".")) if pre else ()
        return cls(int(major), int(minor), int(patch), prerelease, build or "")

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    @property
    def release(self) -> "Version":
        """The version without pre-release and build parts."""
        return Version(self.major, self.minor, self.patch)

    def sort_key(self) -> tuple:
        pre = tuple(_identifier_key(p) for p in self.prerelease)
        if (self.major, self.minor, self.patch) == (1, 0, 0):
            return (1, 0, 0, not self.prerelease, pre)
        return (self.major, self.minor, self.patch, pre)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.sort_key() == other.sort_key()

    def __lt__(self, other: "Version") -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def __hash__(self) -> int:
        return hash(self.sort_key())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(p) for p in self.prerelease)
        if self.build:
            text += "+" + self.build
        return text
