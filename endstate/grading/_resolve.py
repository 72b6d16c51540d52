"""Turning `module:function` strings into graders, with the contract checked.

A grader is `grade(sandbox, **args) -> Verdict`. It is resolved before any run
starts, and resolution refuses a function whose parameters could hand it the
transcript: the grader must judge the end state and nothing else.

A grader of a suite's own lives in a module beside its task.toml, or in the suite's
folder (`name = "my_graders:totals_match"` finds `my_graders.py` or a `my_graders/`
package there first). Such a module is loaded from its file under a name of its own
folder (`_endstate_local_<hash>.my_graders`), so it needs no PYTHONPATH and two tasks
that each hold a `graders.py` never see each other's.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from endstate.errors import CommandWedged, ContainerGone, GraderContractError
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


def _local_module(module_name: str, search: Sequence[Path]) -> str | None:
    """The name `module_name` is loaded under when its top package lies in one of the
    `search` folders (as `top.py` or `top/__init__.py`); None when it lies in none."""
    top, _, rest = module_name.partition(".")
    for folder in search:
        folder = Path(folder).resolve()
        package, single = folder / top / "__init__.py", folder / f"{top}.py"
        source = package if package.is_file() else single if single.is_file() and not rest else None
        if source is None:
            continue
        prefix = "_endstate_local_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]
        unique = f"{prefix}.{top}"
        if unique not in sys.modules:
            if prefix not in sys.modules:  # an empty namespace parent, so the dotted name imports
                parent = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(prefix, None, is_package=True))
                parent.__path__ = []
                sys.modules[prefix] = parent
            spec = importlib.util.spec_from_file_location(
                unique, source, submodule_search_locations=[str(source.parent)] if source is package else None)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[unique] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[unique]
                raise
        return f"{unique}.{rest}" if rest else unique
    return None


def _import(name: str, search: Sequence[Path] = ()) -> Callable[..., Any]:
    module_name, sep, attr = name.partition(":")
    if not sep:
        module_name, _, attr = name.rpartition(".")
    if not module_name or not attr:
        raise GraderContractError(f"grader {name!r}: write it as 'package.module:function'")
    try:
        local = _local_module(module_name, search)
        module = importlib.import_module(local or module_name)
    except ImportError as exc:
        where = " or ".join(str(f) for f in search)
        hint = f"; a module of your own goes beside task.toml or in the suite folder ({where})" if where else ""
        raise GraderContractError(f"grader {name!r}: module {module_name!r} does not import ({exc}){hint}") from None
    except Exception as exc:  # the module itself raised while it was imported
        raise GraderContractError(
            f"grader {name!r}: module {module_name!r} raised {type(exc).__name__} on import: {exc}") from None
    try:
        target = functools.reduce(getattr, attr.split("."), module)
    except AttributeError:
        raise GraderContractError(f"grader {name!r}: {module_name!r} has no {attr!r}") from None
    if not callable(target):
        raise GraderContractError(f"grader {name!r} is not callable")
    return target


def resolve(name: str, args: dict[str, Any] | None = None, *, search: Sequence[Path] = ()) -> Grader:
    """Import a grader and check its signature; raises GraderContractError.

    `search` is the folders whose own modules come first (a task's folder, then its suite's)."""
    args = dict(args or {})
    function = _import(name, search)
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
    _check_types(name, function, args)
    return Grader(name=name, function=function, args=args)


def _check_types(name: str, function: Callable[..., Any], args: dict[str, Any]) -> None:
    """Each argument against its parameter's annotation, strictly (`min_tests = "three"` is refused
    here, before any sandbox, rather than raising TypeError mid-grading). Annotations that cannot be
    read or checked are left to the grader."""
    import typing

    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - a grader of the user's may annotate with names it never imports
        return
    for arg, value in args.items():
        hint = hints.get(arg)
        if hint is None or hint is Any:
            continue
        try:
            msgspec.convert(value, hint, strict=True)
        except msgspec.ValidationError:
            raise GraderContractError(f"grader {name!r}: argument {arg!r} is {value!r}, and it takes "
                                      f"{getattr(hint, '__name__', None) or hint}: fix it in task.toml") from None
        except (TypeError, ValueError):
            continue  # a type msgspec does not know

def run_grader(grader: Grader, sandbox: Any) -> Verdict:
    """Run one grader. One that raises, or returns anything but a Verdict, is an ERROR."""
    try:
        verdict = grader(sandbox)
    except (CommandWedged, ContainerGone):
        raise  # the sandbox's runner hung, or its container was taken away, under the grader: the machinery's
    except Exception as exc:  # a grader bug must never read as a pass
        return Verdict.error(f"{grader.short_name} raised {type(exc).__name__}: {exc}")
    if not isinstance(verdict, Verdict):
        return Verdict.error(f"{grader.short_name} returned {type(verdict).__name__}, not a Verdict")
    return verdict
