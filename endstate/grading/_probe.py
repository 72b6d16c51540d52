"""`probe`: the end state run as an ordinary program, judged outside the sandbox.

Every check inside a test process can be fooled by code in that process: code that
behaves only when a test runner is loaded, objects whose `__eq__` says yes to
anything, code that reads the expected value out of the asserting frame. The probe
takes the test process away. A task's held-out script (`probe/probe.py`) runs in the
grading container before any test process has run there:

- as the user tests run as, in a fresh interpreter started as `python3 SCRIPT` from
  the project folder, the script at an ordinary temporary path with an ordinary
  name; no test runner, no guard, no harness variable in its environment;
- it prints its observations as one JSON document on standard output;
- the harness decodes that output here, outside the sandbox, accepting only JSON
  (null, booleans, numbers, strings, lists, objects), one document and nothing
  after it, at most `OUTPUT_MAX_BYTES`;
- and compares it, type for type, with the expected observations (`probe/expected.json`),
  which never enter the sandbox: there is nothing there to read them from.

An object that compares equal to anything does not survive being printed as JSON,
and a comparison made on this side of the sandbox cannot be answered from inside it.
"""

from __future__ import annotations

import base64
import secrets
import shlex
from typing import Any

import msgspec

from endstate.grading._resolve import Grader, resolve
from endstate.grading._state import Grading
from endstate.grading._testrun import isolation
from endstate.grading._verdict import Verdict
from endstate.sandbox import SealedSandbox

__all__ = ["probe", "probe_graders", "PROBE", "OUTPUT_MAX_BYTES", "PROBE_TIMEOUT_S", "same_json", "first_difference"]

#: The name the probe reports under.
PROBE = "probe"
#: Standard output a probe may print; more is a failure (well under a command's output cap).
OUTPUT_MAX_BYTES = 32 * 1024
PROBE_TIMEOUT_S = 60.0
#: Names a script of one's own might have; one is picked per run.
_SCRIPT_NAMES = ("main.py", "app.py", "run.py", "demo.py", "example.py", "try_it.py")
#: All the program's environment holds: what a login shell would give it, and where the project is.
_ENV = ("PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/agent", "LANG=C.UTF-8", "PYTHONPATH=/workspace")


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, type for type: 1, 1.0 and true are three different answers."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b


def _short(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def first_difference(observed: Any, expected: Any, where: str = "") -> str:
    """Where two JSON values first differ, and how (for the verdict's reason)."""
    if isinstance(observed, dict) and isinstance(expected, dict):
        for key in sorted(expected.keys() | observed.keys()):
            if key not in observed:
                return f"{where}.{key}: missing (expected {_short(expected[key])})"
            if key not in expected:
                return f"{where}.{key}: not expected ({_short(observed[key])})"
            if not same_json(observed[key], expected[key]):
                return first_difference(observed[key], expected[key], f"{where}.{key}")
    if isinstance(observed, list) and isinstance(expected, list) and len(observed) == len(expected):
        for i, (a, b) in enumerate(zip(observed, expected)):
            if not same_json(a, b):
                return first_difference(a, b, f"{where}[{i}]")
    return f"{where or 'output'}: saw {_short(observed)}, expected {_short(expected)}"


def _writing(script: str) -> str:
    """A shell line that writes the script to a fresh temporary folder and prints its path.
    It is a command of its own, run before any code of the end state: whether the harness
    managed to write its script is never read from output the end state could have printed."""
    encoded = base64.b64encode(script.encode()).decode()
    name = _SCRIPT_NAMES[secrets.randbelow(len(_SCRIPT_NAMES))]
    return f'folder=$(mktemp -d) && printf %s {encoded} | base64 -d > "$folder/{name}" && echo "$folder/{name}"'


def _running(path: str) -> str:
    """A shell line that runs the written script as a plain program from the project folder with
    nothing of the harness in its environment, then ends anything it left running."""
    return (f'cd /workspace && env -i {" ".join(_ENV)} python3 {shlex.quote(path)}; status=$?; '
            "kill -s KILL -1 2>/dev/null; exit $status")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


def probe(sandbox: SealedSandbox, script: str, expected: Any, timeout: float = PROBE_TIMEOUT_S) -> Verdict:
    """The task's held-out script, run as an ordinary program in the grading container, prints
    what the end state does; that must equal `expected`, decoded and compared out here."""
    grading = Grading.of(sandbox)
    written = grading.box.exec(_writing(script), timeout=timeout)
    path = written.stdout.strip()
    if written.exit_code != 0 or not path.startswith("/"):  # no code of the end state has run yet
        return Verdict.error(f"the probe script could not be written into the grading sandbox{_last_line(written.stderr)}")
    # In namespaces of its own, its script's folder carried in: it leaves nothing a test run could meet.
    wrapper = isolation(grading, [path.rpartition("/")[0]])
    result = grading.box.exec_wrapped(_running(path), wrapper, timeout=timeout)
    if result.timed_out:
        return Verdict.fail(f"the end state run as a program did not finish within {timeout:.0f}s")
    if result.exit_code != 0:
        return Verdict.fail(f"the end state run as a program exited {result.exit_code}{_last_line(result.stderr)}")
    data = result.stdout.encode("utf-8", "surrogateescape")
    if result.truncated or len(data) > OUTPUT_MAX_BYTES:
        return Verdict.fail(f"the end state run as a program printed more than {OUTPUT_MAX_BYTES} bytes")
    try:
        observed = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError) as exc:  # nested past the decoder's depth is not an answer either
        return Verdict.fail(f"the end state run as a program printed something other than one JSON document ({exc})")
    if not same_json(observed, expected):
        return Verdict.fail("the end state run as a program (no test runner loaded) does not do what the task asks: "
                            + first_difference(observed, expected))
    return Verdict.ok()


def probe_graders(held_out: tuple[str, Any] | None) -> list[Grader]:
    """The probe grader for a task's probe (script, expected observations); none without one."""
    if held_out is None:
        return []
    return [resolve(f"endstate.grading:{PROBE}", {"script": held_out[0], "expected": held_out[1]})]
