"""Turning `module:function` strings into graders, with the contract checked.

A grader is `grade(sandbox, **args) -> Verdict`. It is resolved before any run
starts, and resolution refuses a function whose parameters could hand it the
transcript: the grader must judge the end state and nothing else.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

import msgspec

from endstate.errors import CommandWedged, GraderContractError
from endstate.grading._verdict import Verdict

__all__ = ["Grader", "resolve", "run_grader", "FORBIDDEN_PARAMETERS"]

#: Parameter names (or parts of names) that would let a grader read what the agent said.
FORBIDDEN_PARAMETERS = ("transcript", "messages", "message", "result", "history",
                        "final_text", "output", "trajectory", "conversation", "response")

_FORBIDDEN = re.compile("|".join(FORBIDDEN_PARAMETERS))


class Grader(msgspec.Struct, frozen=True):
    """A resolved grader: its name, function and bound keyword arguments."""

    name: str
    function: Callable[..., Verdict]
    args: dict[str, Any] = {}

    @property
    def short_name(self) -> str:
        return self.function.__name__

    def __call__(self, sandbox: Any) -> Verdict:
        return self.function(sandbox, **self.args)


def _import(name: str) -> Callable[..., Any]:
    module_name, sep, attr = name.partition(":")
    if not sep:
        module_name, _, attr = name.rpartition(".")
    if not module_name or not attr:
        raise GraderContractError(f"grader {name!r}: write it as 'package.module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise GraderContractError(f"grader {name!r}: module {module_name!r} does not import ({exc})") from None
    try:
        target = functools.reduce(getattr, attr.split("."), module)
    except AttributeError:
        raise GraderContractError(f"grader {name!r}: {module_name!r} has no {attr!r}") from None
    if not callable(target):
        raise GraderContractError(f"grader {name!r} is not callable")
    return target


def resolve(name: str, args: dict[str, Any] | None = None) -> Grader:
    """Import a grader and check its signature; raises GraderContractError."""
    args = dict(args or {})
    function = _import(name)
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise GraderContractError(f"grader {name!r}: its signature cannot be inspected") from None
    params = list(signature.parameters.values())
    if not params or params[0].name != "sandbox" or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
    ):
        raise GraderContractError(
            f"grader {name!r}: its first parameter must be the positional 'sandbox' (it reads the end state)"
        )
    for param in params:
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise GraderContractError(f"grader {name!r} takes **{param.name}: name the arguments it accepts")
        if _FORBIDDEN.search(param.name.lower()):
            raise GraderContractError(
                f"grader {name!r} takes {param.name!r}: a grader reads the end state, never the transcript"
            )
    accepted = {p.name for p in params[1:]}
    unknown = sorted(set(args) - accepted)
    if unknown:
        raise GraderContractError(
            f"grader {name!r} has no argument {', '.join(map(repr, unknown))}"
            f" (it takes: {', '.join(sorted(accepted)) or 'none'})"
        )
    missing = [p.name for p in params[1:] if p.default is inspect.Parameter.empty and p.name not in args
               and p.kind is not inspect.Parameter.VAR_POSITIONAL]
    if missing:
        raise GraderContractError(f"grader {name!r} needs argument {', '.join(map(repr, missing))}")
    return Grader(name=name, function=function, args=args)


def run_grader(grader: Grader, sandbox: Any) -> Verdict:
    """Run one grader. One that raises, or returns anything but a Verdict, is an ERROR."""
    try:
        verdict = grader(sandbox)
    except CommandWedged:
        raise  # the sandbox's runner hung under the grader: a fault of the machinery, not a verdict
    except Exception as exc:  # a grader bug must never read as a pass
        return Verdict.error(f"{grader.short_name} raised {type(exc).__name__}: {exc}")
    if not isinstance(verdict, Verdict):
        return Verdict.error(f"{grader.short_name} returned {type(verdict).__name__}, not a Verdict")
    return verdict
