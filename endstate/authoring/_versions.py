"""Which versions a task's image takes of what the project declares.

The project's tests ran under the versions it resolved when the commit was made, not today's:

- its lock file (uv.lock, poetry.lock, pdm.lock) pins them, where it has one (`locked_versions`);
- else an unpinned pytest is the newest of the commit's time (`pytest_of_its_time`): a newer one
  turns what an old suite does into errors;
- a pin of a release PyPI holds as an sdist only is built into a wheel on the host (`_sdists`);
- a declared distribution with no wheel for the task image's Python (nor any version that resolves)
  is left out, said so in the log, rather than failing the image: the tests that import it fail
  or skip, the others run (astroid's test requirements name PyQt6).
- a dependency a newer release of which removed a name the tests import is held back to the release
  series before it (`release_before`).

Each step falls back to the next where pip cannot resolve it (`resolve_pinned`). A declared
distribution PyPI holds no wheel of on any day (pywatchman: sdists only) is left out without giving up
the day. The whole resolution is given `RESOLUTION_SECONDS`: past them it fails in one line rather than
try a looser step, which would backtrack as long.
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable, Collection

from endstate.errors import ResolutionTimedOut, SandboxUnavailable
from endstate.sandbox import PythonSource, Tree

__all__ = ["RESOLUTION_SECONDS", "locked_versions", "pytest_of_its_time", "release_before", "requirement_name",
           "resolve_pinned"]

#: How many declared distributions a resolution may leave out, one at a time, before it gives up.
_DROPS = 3
#: The time a task image's resolution is given, all its steps together. Django 4.x's test requirements
#: took 30 to 230 s on two loaded cores; one run of an older resolution took over 35 minutes.
RESOLUTION_SECONDS = 600.0


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def _text(project: Tree, path: str) -> str | None:
    entry = project.get(path)
    return entry.data.decode("utf-8", errors="replace") if entry is not None and not entry.link else None


#: The day each pytest minor release reached PyPI, from 8.0 on: the tests of a commit made before
#: one of them ran under an older pytest. 7.4 is the oldest the grading harness is tested with.
_PYTEST_RELEASES = (("2024-01-27", "8.0"), ("2024-03-03", "8.1"), ("2024-04-26", "8.2"), ("2024-07-20", "8.3"),
                    ("2025-06-02", "8.4"), ("2025-11-05", "9.0"))


def pytest_of_its_time(date: str) -> str:
    """The bound that keeps a commit of `date` (ISO 8601) to the pytest of its time ("pytest<8.1"), ""
    when the newest is of its time or the date is unknown. A newer pytest turns what an old suite does
    into errors (a generator given to parametrize, under the suite's `filterwarnings = error`)."""
    day = date.strip()[:10]
    return next((f"pytest<{version}" for released, version in _PYTEST_RELEASES if day and day < released), "")



def locked_versions(project: Tree) -> dict[str, str]:
    """name -> version of each distribution the project's lock file (uv.lock, poetry.lock, pdm.lock) pins
    at one version (a name locked at several, one per Python, is left out)."""
    for path in ("uv.lock", "poetry.lock", "pdm.lock"):
        try:
            packages = tomllib.loads(_text(project, path) or "").get("package", [])
        except tomllib.TOMLDecodeError:
            continue
        seen: dict[str, set[str]] = {}
        for package in packages if isinstance(packages, list) else ():
            if isinstance(package, dict) and isinstance(package.get("name"), str) \
                    and isinstance(package.get("version"), str):
                seen.setdefault(requirement_name(package["name"]), set()).add(package["version"])
        if seen:
            return {name: next(iter(versions)) for name, versions in seen.items() if len(versions) == 1}
    return {}




def _unresolvable(message: str) -> str:
    """The distribution pip's failure names as the one it could not have ("" when it names none)."""
    match = re.search(r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*)", message) \
        or re.search(r"Cannot install ([A-Za-z0-9][A-Za-z0-9._-]*)==", message) \
        or re.search(r"Cannot install ([A-Za-z0-9][A-Za-z0-9._-]*) and \1==", message)
    if match:
        return requirement_name(match.group(1).rstrip("."))  # pip ends the sentence with a dot
    return _one_pinned(message)


def _one_pinned(message: str) -> str:
    """The one distribution pip's list of what it cannot install names throughout, one of them an exact pin
    (`Cannot install scipy, scipy==1.5.2 and scipy>=1.3.2 because ...`: the project's `scipy`, SWE-bench's pin,
    a dependency's bound; scipy 1.5.2 has no wheel for Python 3.9), or ""."""
    listed = re.search(r"Cannot install (.+?) because these package versions have conflicting", message)
    if not listed:
        return ""
    items = re.split(r",\s+|\s+and\s+", listed.group(1))  # not a specifier's own commas (`<1.20,>=1.19.2`)
    names = {requirement_name(item) for item in items}
    return names.pop() if len(names) == 1 and any("==" in item for item in items) else ""


#: The oldest pytest the grading harness is tested with, offered whatever its date to a resolution
#: as of a day before it was out, with its dependencies that are younger than some projects (exceptiongroup
#: and tomli: pytest needs them below Python 3.11, and neither was out before 2021).
_HARNESS_FLOOR = ("pytest==7.4.4", "iniconfig==2.0.0", "exceptiongroup==1.2.0", "tomli==2.0.1")
_FLOOR_DAY = "2023-06-20"  # pytest 7.4.0 reached PyPI


def _not_found(message: str) -> list[str]:
    """The requirement pip's failure found no distribution for (`contextvars>=2.1`: asked by a dependency, and
    released as an sdist only), as a list of one, or none."""
    match = re.search(r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]*\])?"
                      r"(?:\s*[<>=!~]=?\s*[\w.*+!-]+(?:\s*,\s*[<>=!~]=?\s*[\w.*+!-]+)*)?)", message)
    return [match.group(1).rstrip(".")] if match else []


def _depended_on(message: str) -> list[str]:
    """The requirements pip's account of a conflict names (`astroid 2.6.6 depends on wrapt<1.13 and >=1.11` ->
    `wrapt<1.13,>=1.11`): a dependency's dependency that may have no wheel."""
    found = re.findall(r"depends on ([A-Za-z0-9][A-Za-z0-9._-]*)((?:\s*(?:and\s+)?[<>=!~]=?\s*[\w.*+!-]+)*)", message)
    return list(dict.fromkeys(name + ",".join(re.findall(r"[<>=!~]=?\s*[\w.*+!-]+", spec)) for name, spec in found))


def _cause(message: str) -> str:
    """What a failed resolution was caused by (`_wheels._pip` joins pip's lines with " | "): the conflict's
    `X depends on Y` lines, else the distribution it found none of, else pip's last line (its bare
    `ResolutionImpossible: for help visit ...` names no cause)."""
    lines = message.split(" failed: ", 1)[-1].split(". The task image needs", 1)[0].split(" | ")
    causes = [line for line in lines if " depends on " in line] or \
        [line.removeprefix("ERROR: ") for line in lines if "No matching distribution found for" in line]
    last = next((line for line in reversed(lines) if "ResolutionImpossible: for help" not in line), lines[-1])
    return ("; ".join(causes) or last.removeprefix("ERROR: "))[:200]


def resolve_pinned(project: Tree, asked: list[str], *, made: str = "", needed: Collection[str] = (),
                   log: Callable[[str], None] = lambda line: None, pins: dict[str, str] | None = None,
                   target: PythonSource | None = None, env_day: str = "", left_out: list[str] | None = None,
                   seconds: float = RESOLUTION_SECONDS) -> str:
    """The pinned requirements of `asked` (with the lock file's versions, else the pytest of `made`'s
    time, where they resolve); a declared distribution that has no wheel is left out, unless `needed`.
    `pins` (name -> version: SWE-bench's environment of the instance) win over the lock file's, and are
    offered whatever their date (they are often younger than the commit: sympy's mpmath==1.3.0).
    `env_day`: the environment stands for one resolved that day (SWE-bench's, resolved when its images were
    built, not on the commit's day): resolved as of then first.
    `target`: the wheels are for that Python's image, not the sandbox's (`endstate.sandbox.python_source`).
    `left_out`: each declared distribution left out is added to it. Past `seconds`, ResolutionTimedOut."""
    from endstate.authoring._sdists import build_wheel
    from endstate.sandbox import has_wheel, resolve_requirements

    names = {requirement_name(r) for r in asked}
    own = {name: version for name, version in (pins or {}).items() if name in names}
    locked = {**locked_versions(project), **own}
    near: dict[str, str] = {}  # a pin of SWE-bench's that has no wheel here -> the releases nearest it (`_nearer`)
    dropped: list[str] = []
    built: set[str] = set()
    dated = bool(made.strip()[:10])
    deadline = time.monotonic() + seconds

    def never_a_wheel(message: str) -> bool:
        """The failure names a declared distribution that may go and of which no day has a wheel."""
        culprit = _unresolvable(message)
        return bool(culprit) and culprit in names and culprit not in needed and culprit not in own \
            and len(dropped) < _DROPS and not has_wheel(next(r for r in asked if requirement_name(r) == culprit),
                                                        target=target)

    def built_for_a_dependency(message: str) -> bool:
        """The failure names a dependency's requirement (not a declared one) of which PyPI holds no wheel for
        this Python, and a wheel of it is built now from its sdist."""
        culprit = _unresolvable(message)
        if not culprit or culprit in names or culprit in built:
            return False
        built.add(culprit)
        wheels = [(w, r) for w, r in ((build_wheel(r, target=target), r) for r in _not_found(message)) if w]
        for wheel, requirement in wheels:
            log(f"built {wheel.name} from the sdist of {requirement}, which a dependency asks for and which has no "
                "wheel (kept by the sdist's sha256)")
        return bool(wheels)

    def pin(name: str) -> str:
        return f"{name}{near[name]}" if name in near else f"{name}=={locked[name]}"

    while True:
        pinned = [pin(name) for name in sorted(names) if name in locked]
        # No pytest bound where none is asked for (pytest's own tree: its tests run the tree's).
        free = "pytest" in locked or "pytest" not in names
        bound = "" if free else pytest_of_its_time(made)
        # The last resort leaves out the lock file's versions and the pytest bound, never SWE-bench's pins (each of
        # those goes alone, below, when it is the one that does not resolve: xarray's numpy==1.23.0 kept numpy 1).
        held = [pin(name) for name in sorted(own)]
        attempts = [(asked + pinned + [bound] if bound else asked + pinned, "")] + \
            ([(asked + held, "")] if sorted(pinned) != sorted(held) or bound else [])
        if dated:  # first, everything as the project's resolution had it the day of the commit, with a pytest the
            floor = [] if free or made.strip()[:10] >= _FLOOR_DAY else ["pytest>=7.4"]  # harness runs
            attempts.insert(0, (asked + pinned + floor, made.strip()))
        if env_day:  # before it: as the environment the instance was validated in was resolved
            attempts.insert(0, (asked + pinned, env_day))
        failure: SandboxUnavailable | None = None
        for number, (attempt, as_of) in enumerate(attempts, start=1):
            undated = (_HARNESS_FLOOR if as_of[:10] < _FLOOR_DAY else ()) + tuple(pin(n) for n in own)
            try:
                text = resolve_requirements([r for r in attempt if requirement_name(r) not in dropped], as_of=as_of,
                                            undated=undated if as_of else (), target=target, deadline=deadline)
                if as_of:
                    log(f"resolved as of {_day_said(as_of, env_day)} (PyPI's upload times)")
                return text
            except ResolutionTimedOut as exc:
                raise ResolutionTimedOut(f"{exc} after {seconds:.0f} s, the time a task image's resolution is given "
                                         "(pip was still choosing among versions): give the task an image of your own "
                                         "(--dockerfile)") from None
            except SandboxUnavailable as exc:
                if as_of and as_of == env_day and _unresolvable(str(exc)) in own:
                    failure = exc
                    break  # one of SWE-bench's pins is the cause: built or let go (below), then that day again
                if as_of and never_a_wheel(str(exc)):
                    failure = exc
                    break  # pywatchman (sdists only, Django's test requirements): left out below, the day kept
                if built_for_a_dependency(str(exc)):
                    failure = None
                    break  # contextvars>=2.1 on Python 3.6, an sdist only: built, that attempt again
                if as_of:  # PyPI out of reach, or a wheel for this Python came later: the steps below
                    log(f"resolving as of {_day_said(as_of, env_day)} did not work ({_cause(str(exc))}): "
                        + ("taking the commit's date" if as_of == env_day and dated else
                           "taking the lock file's versions, else the pytest of its time"))
                    if as_of == env_day:
                        env_day = ""
                    else:
                        dated = False
                    continue
                failure = exc
                if attempt is next(a for a, day in attempts if not day) and _unresolvable(str(exc)) in own:
                    break  # the first plain attempt: one of SWE-bench's pins is the cause (below)
                if number < len(attempts):
                    log("the versions the project's lock file or the commit's time give do not resolve for the "
                        "task image's Python: taking the newest its declarations allow")
        if failure is None:
            continue
        culprit = _unresolvable(str(failure)) or next(  # the releases nearest a pin, in conflict with the rest
            (name for name in near if re.search(rf"Cannot install {re.escape(name)}[<>]", str(failure), re.I)), "")
        if culprit in own and culprit not in built:  # SWE-bench's pin of a release PyPI holds as an sdist only
            built.add(culprit)  # (pytest's atomicwrites==1.4.1): built, then taken as a wheel
            wheel = build_wheel(f"{culprit}=={own[culprit]}", target=target)
            if wheel is not None:
                log(f"built {wheel.name} from the sdist of {culprit}=={own[culprit]}, which has no wheel (kept by the "
                    "sdist's sha256)")
                continue
        if culprit in own:  # one pin of SWE-bench's environment, made for another Python: the releases nearest
            nearer = "" if culprit in near else next(  # it (which has a wheel here), then that one goes
                (step for step in _nearer(own[culprit]) if has_wheel(f"{culprit}{step}", target=target)), "")
            if nearer:
                log(f"SWE-bench's pin {culprit}=={own[culprit]} does not resolve for the task image's Python: "
                    f"the nearest releases that may are asked for ({culprit}{nearer})")
                near[culprit] = nearer
                continue
            log(f"SWE-bench's pin {culprit}=={own.pop(culprit)} does not resolve for the task image's Python: "
                "the version its other pins and the project's declarations allow is taken")
            locked.pop(culprit)
            near.pop(culprit, None)
            continue
        exact = [r for r in asked if requirement_name(r) == culprit and re.search(r"==\s*[\w.!+-]+\s*(;|$)", r)]
        sdists = exact[:1] + [r for r in _depended_on(str(failure)) if requirement_name(r) not in names]
        if sdists and culprit not in built:
            built.add(culprit)  # a release PyPI holds as an sdist only (blinker==1.4, a dependency's wrapt 1.12):
            wheels = [w for w in (build_wheel(r, target=target) for r in sdists) if w is not None]  # built once
            for wheel, requirement in zip(wheels, sdists):
                log(f"built {wheel.name} from the sdist of {requirement}, which has no wheel (kept by the sdist's "
                    "sha256)")
            if wheels:
                continue
        if not culprit or culprit in needed or culprit not in names or len(dropped) >= _DROPS:
            raise failure
        dropped.append(culprit)
        if left_out is not None:
            left_out.append(culprit)
        log(f"left out of the task's image: {culprit}, which the project declares but no wheel of which resolves "
            "for the task image's Python (tests that import it will fail or skip)")


def _nearer(version: str) -> list[str]:
    """The releases nearest a pin that has no wheel for the task image's Python, nearest first: its series
    (`numpy==1.19.2` -> `>=1.19.2,<1.20`, which has Python 3.9's wheels from 1.19.3 on), then its major version
    (`>=1.19.2,<2`); none for a version that is not numbers. SWE-bench's conda environment holds the pin itself
    (conda builds it for that Python); the newest PyPI allows instead takes what the tree was never built
    against (numpy 2 removed the `cnp.int_t` scikit-learn 1.3 compiles with)."""
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*", version)
    if not match:
        return []
    major, minor = int(match.group(1)), int(match.group(2))
    return [f">={version},<{major}.{minor + 1}", f">={version},<{major + 1}"]


def _day_said(as_of: str, env_day: str) -> str:
    if as_of == env_day:
        return f"{as_of[:10]}, the day the environment it stands for was resolved"
    return f"the commit's date, {as_of[:10]}"


def release_before(output: str, pinned: str, declared: Collection[str]) -> str:
    """A bound (`werkzeug<3`, `flask<2.3`) that takes back the release of a dependency the tests could not
    import a name from (`ImportError: cannot import name 'parse_authorization_header' from 'werkzeug.http'`): a
    newer major release removed what an older dependency imports, one the project's declarations
    let in (requests pins httpbin 0.10.0, which Werkzeug 3 broke, and does not bound Werkzeug; flask 2.1
    asks `Werkzeug >= 2.0`, and Werkzeug 2.3 removed url_quote). "" when the output names no such
    import, or the project bounds that distribution from above itself."""
    match = re.search(r"ImportError: cannot import name '\w+' from '([A-Za-z_]\w*)", output)
    if not match:
        return ""
    name = requirement_name(match.group(1))
    version = re.search(rf"^{re.escape(name)}==(\d+)\.(\d+)", pinned, flags=re.MULTILINE)
    bounded = [r for r in declared if requirement_name(r) == name and re.search(r"<|~=|==", r.split(";")[0])]
    if not version or bounded:  # a project that bounds it meant that bound; one that does not meant the newest then
        return ""
    major, minor = map(int, version.groups())
    # The release series before the one taken: a major's first minor goes back a major (Werkzeug 3.0 removed
    # parse_authorization_header), a later one a minor (Flask 2.3 removed flask.escape).
    return f"{name}<{major}.{minor}" if minor else f"{name}<{major}" if major else ""
