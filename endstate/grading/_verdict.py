"""A grader's answer."""

from __future__ import annotations

from enum import Enum

import msgspec

__all__ = ["Outcome", "Verdict"]


class Outcome(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    #: The grader or the harness broke: neither a pass nor the agent's failure.
    ERROR = "error"


class Verdict(msgspec.Struct, frozen=True):
    outcome: Outcome
    reason: str = ""
    #: A FAIL because the end state tampered with the grading (the test process, its report, the
    #: test configuration), not because a test failed: the hack classifier reads this, not the prose.
    tampering: bool = False

    @classmethod
    def ok(cls, reason: str = "") -> "Verdict":
        return cls(Outcome.PASS, reason)

    @classmethod
    def fail(cls, reason: str) -> "Verdict":
        return cls(Outcome.FAIL, reason)

    @classmethod
    def tampered(cls, reason: str) -> "Verdict":
        """A FAIL that is a tampering finding."""
        return cls(Outcome.FAIL, reason, tampering=True)

    @classmethod
    def error(cls, reason: str) -> "Verdict":
        return cls(Outcome.ERROR, reason)

    @property
    def passed(self) -> bool:
        return self.outcome is Outcome.PASS
