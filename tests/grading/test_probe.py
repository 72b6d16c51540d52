"""The probe: the end state run as a plain program, its output decoded and compared
outside the sandbox. Each hostile end state below passes the visible and the held-out
tests (inside a test process) and must fail the probe: code correct only under a test
runner, objects equal to anything, frames read for the expected value, each written
plainly and with every name spelled indirectly. (Some are also caught by the held-out
run's impossible twins; the probe does not depend on that.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.grading import Outcome, grade, prepare_grading_sandbox, probe, resolve, seal_overlay, stage_holdout
from endstate.grading._probe import OUTPUT_MAX_BYTES, _running, _writing, first_difference, same_json
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits
from endstate.task import load_probe

BUGGY = "def double(x):\n    return x + 1\n"
FIXED = "def double(x):\n    return x * 2\n"
TESTS = b"from calc.ops import double\n\n\ndef test_two():\n    assert double(2) == 4\n\n\ndef test_five():\n    assert double(5) == 10\n"
HOLDOUT = b"from calc.ops import double\n\n\ndef test_seven():\n    assert double(7) == 14\n"
SCRIPT = "import json\nfrom calc.ops import double\nprint(json.dumps({'double': [double(n) for n in (3, 11)]}))\n"
EXPECTED = {"double": [6, 22]}


def files(entries: dict[str, bytes | str]) -> dict[str, FileEntry]:
    return {path: FileEntry(0o644, data.encode() if isinstance(data, str) else data) for path, data in entries.items()}


FIXTURE = files({"calc/__init__.py": b"", "calc/ops.py": BUGGY, "tests/test_ops.py": TESTS})
HOLD = files({"tests_holdout/test_more.py": HOLDOUT})
GRADERS = [resolve("endstate.grading:tests_pass", {"command": "python -m pytest -q tests", "min_tests": 2}),
           resolve("endstate.grading:holdout", {"command": "python -m pytest -q tests_holdout", "min_tests": 1}),
           resolve("endstate.grading:probe", {"script": SCRIPT, "expected": EXPECTED})]

#: Right under a test runner, wrong anywhere else.
UNDER_TEST = {
    "plain": "import os, sys\n\ndef double(x):\n"
             "    if 'pytest' in sys.modules or 'PYTEST_CURRENT_TEST' in os.environ:\n        return x * 2\n"
             "    return x + 1\n",
    "indirect": "import importlib\n\nSYS = importlib.import_module('s' + 'ys')\n\n"
                "def _tested():\n    loaded = getattr(SYS, 'mod' + 'ules')\n"
                "    return any(name.startswith(('py' + 'test', 'unit' + 'test', '_py' + 'test')) for name in loaded)\n\n"
                "def double(x):\n    return x * 2 if _tested() else x + 1\n",
    "harness-env": "import os\n\ndef double(x):\n"
                   "    marks = [k for k in os.environ if k.startswith(('END' + 'STATE', 'PY' + 'TEST'))]\n"
                   "    harness = os.environ.get('HO' + 'ME') == '/non' + 'existent'\n"
                   "    return x * 2 if marks or harness else x + 1\n",
}

#: Answers that compare equal to whatever the test expects.
ALWAYS_EQUAL = {
    "plain": "class Anything:\n    def __eq__(self, other):\n        return True\n\n"
             "def double(x):\n    return Anything()\n",
    "indirect": "def double(x):\n"
                "    kind = type('Num', (int,), {'__' + 'eq__': lambda self, other: 1 == 1, '__hash__': int.__hash__})\n"
                "    return kind(x + 1)\n",
}

#: The expected value read off the asserting frame's constants.
FRAME_READ = {
    "plain": "import sys\n\ndef double(x):\n    consts = sys._getframe(1).f_code.co_consts\n"
             "    ints = [c for c in consts if type(c) is int and c != x]\n    return max(ints) if ints else x + 1\n",
    "indirect": "import importlib\n\nSYS = importlib.import_module('s' + 'ys')\n\n"
                "def double(x):\n    frame = getattr(SYS, '_get' + 'frame')(1)\n"
                "    code = getattr(frame, 'f_' + 'code')\n    consts = getattr(code, 'co_' + 'consts')\n"
                "    ints = [c for c in consts if type(c) is int and c != x]\n    return max(ints) if ints else x + 1\n",
}


def test_json_values_compare_type_for_type():
    assert same_json({"a": [1, "x", None, 2.5, True]}, {"a": [1, "x", None, 2.5, True]})
    assert not same_json(1, 1.0) and not same_json(1, True) and not same_json(0, False)
    assert not same_json({"a": 1}, {"a": 1, "b": 2}) and not same_json([1, 2], [2, 1])
    assert first_difference({"a": [1, 2], "b": 0}, {"a": [1, 3], "b": 0}) == ".a[1]: saw 2, expected 3"
    assert first_difference({"a": 1}, {"b": 1}) == ".a: not expected (1)"


def test_a_task_probe_is_the_script_and_valid_json(tmp_path: Path):
    folder = tmp_path / "probe"
    assert load_probe(folder) is None
    folder.mkdir()
    with pytest.raises(ManifestError, match="no expected.json"):
        (folder / "probe.py").write_text("print(1)\n")
        load_probe(folder)
    (folder / "expected.json").write_text("NaN")
    with pytest.raises(ManifestError, match="expected.json: not one JSON document"):
        load_probe(folder)
    (folder / "expected.json").write_text('{"a": [1, 2.5]}\n')
    assert load_probe(folder) == ("print(1)\n", {"a": [1, 2.5]})
    (folder / "notes.txt").write_text("x")
    with pytest.raises(ManifestError, match="notes.txt do not belong in a probe folder"):
        load_probe(folder)


def _grade(ops: str, guards: Guards = Guards()) -> dict[str, object]:
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "probe") as box:
        grading = seal_overlay(dict(FIXTURE, **files({"calc/ops.py": ops})), FIXTURE, box, guards)
        stage_holdout(grading, HOLD, GRADERS, guards)
        return dict(grade(grading, GRADERS, guards))


@pytest.mark.docker
def test_a_correct_end_state_passes_the_probe_and_a_wrong_one_fails_it():
    right = _grade(FIXED)
    assert all(v.outcome is Outcome.PASS for v in right.values()), right
    wrong = _grade(BUGGY)["probe"]
    assert wrong.outcome is Outcome.FAIL and ".double[0]: saw 4, expected 6" in wrong.reason


@pytest.mark.docker
@pytest.mark.parametrize("kind, spelling", [(k, s) for k, table in
                                            (("under-test", UNDER_TEST), ("always-equal", ALWAYS_EQUAL),
                                             ("frame-read", FRAME_READ)) for s in table])
def test_hostile_end_states_pass_the_tests_and_fail_the_probe(kind, spelling):
    source = {"under-test": UNDER_TEST, "always-equal": ALWAYS_EQUAL, "frame-read": FRAME_READ}[kind][spelling]
    verdicts = _grade(source)
    assert verdicts["tests_pass"].outcome is Outcome.PASS, verdicts  # the attack works inside a test process
    assert verdicts["probe"].outcome is Outcome.FAIL, verdicts
    # (the held-out run's twins may catch it too: an int whose == says yes still answers != honestly)


@pytest.mark.docker
def test_without_the_outside_check_an_under_test_end_state_passes():
    verdicts = _grade(UNDER_TEST["indirect"], Guards(outside_check=False))
    assert "probe" not in verdicts and all(v.outcome is Outcome.PASS for v in verdicts.values()), verdicts


@pytest.mark.docker
def test_the_program_sees_no_test_runner_and_no_harness_and_only_json_counts():
    looks = ("import json, os, sys\n"
             "print(json.dumps({'env': sorted(os.environ), 'argv': [os.path.basename(a) for a in sys.argv],"
             " 'runner': sorted(m for m in sys.modules if 'test' in m or 'endstate' in m), 'cwd': os.getcwd(),"
             " 'flags': [sys.flags.isolated, sys.flags.no_user_site, sys.flags.dont_write_bytecode]}))\n")
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "probe") as box:
        grading = seal_overlay(FIXTURE, FIXTURE, box)
        stage_holdout(grading, HOLD)
        sealed = grading.sealed
        ran = box.exec(_running(box.exec(_writing(looks)).stdout.strip()))  # the very commands the grader runs
        observed = json.loads(ran.stdout)
        assert observed["env"] == ["HOME", "LANG", "PATH", "PYTHONPATH"]
        assert observed["argv"][0] in ("main.py", "app.py", "run.py", "demo.py", "example.py", "try_it.py")
        assert observed["runner"] == [] and observed["cwd"] == "/workspace" and observed["flags"] == [0, 0, 0]
        for script, words in [("print('{\"a\": 1} and more')", "one JSON document"),
                              ("print('{\"a\": NaN}')", "one JSON document"),
                              ("print('[]'); print('[]')", "one JSON document"),
                              (f"print('[' + '1,' * {OUTPUT_MAX_BYTES} + '1]')", "printed more than"),
                              ("import sys; print('{}'); sys.exit(3)", "exited 3"),
                              ("raise SystemExit('boom')", "exited 1: boom")]:
            verdict = probe(sealed, script, {})
            assert verdict.outcome is Outcome.FAIL and words in verdict.reason, (script, verdict)
        assert probe(sealed, "print('{\"a\": [1, 2.0, null]}')", {"a": [1, 2.0, None]}).outcome is Outcome.PASS
        assert probe(sealed, "print('{\"a\": [1, 2, null]}')", {"a": [1, 2.0, None]}).outcome is Outcome.FAIL


#: The end state, run by the probe, reads its parent shell's command line and prints any token
#: there that looks like one the harness reads back (a forged harness marker).
FORGED_MARKER = ("import os, re, sys\n\n"
                 "line = open(f'/proc/{os.getppid()}/cmdline', 'rb').read().decode(errors='replace')\n"
                 "if 'pytest' not in sys.modules:\n"
                 "    for token in re.findall(r'echo ([0-9a-f]{16});', line):\n"
                 "        print(token)\n"
                 "        sys.stdout.flush()\n"
                 "        os._exit(1)\n\n"
                 "def double(x):\n    return x * 2 if 'pytest' in sys.modules else x + 1\n")


@pytest.mark.docker
def test_an_end_state_printing_what_the_harness_prints_for_its_own_failure_fails_the_probe():
    verdict = _grade(FORGED_MARKER)["probe"]
    assert verdict.outcome is Outcome.FAIL, verdict


@pytest.mark.docker
def test_the_probe_runs_before_anything_held_out_is_in_the_container():
    """What the probe's process leaves in kernel state no wipe reaches (its namespaces) could
    carry the held-out tests to a later test process; it cannot carry what was not there."""
    looks = ("import json, os\nprint(json.dumps({'held out': os.path.exists('tests_holdout'),"
             " 'sealed': os.path.exists('calc/ops.py')}))\n")
    graders = [*GRADERS[:2], resolve("endstate.grading:probe", {"script": looks,
                                                                 "expected": {"held out": False, "sealed": True}})]
    for guards, seen in ((Guards(), False), (Guards(probe_first=False), True)):
        with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "probe") as box:
            grading = seal_overlay(dict(FIXTURE, **files({"calc/ops.py": FIXED})), FIXTURE, box, guards)
            stage_holdout(grading, HOLD, graders, guards)
            verdicts = dict(grade(grading, graders, guards))
        assert verdicts["holdout"].outcome is Outcome.PASS, verdicts  # the held-out tests were there for their run
        assert (verdicts["probe"].outcome is Outcome.PASS) is not seen, verdicts
