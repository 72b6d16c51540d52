from __future__ import annotations

import random

import pytest

import endstate.agent._normalise as normalise_module
from endstate.agent._normalise import NORMALISE_RULES, NormaliseRule, normalise_output


def test_rules_are_named_and_ordered() -> None:
    assert [rule.name for rule in NORMALISE_RULES] == [
        "ansi-escapes",
        "crlf",
        "carriage-return",
        "timestamp",
        "pytest-summary",
        "duration",
        "hex-address",
        "pytest-tmp",
        "temp-path",
        "pid",
        "trailing-whitespace",
    ]
    assert all(isinstance(rule, NormaliseRule) for rule in NORMALISE_RULES)


def rule(name: str) -> NormaliseRule:
    return next(r for r in NORMALISE_RULES if r.name == name)


# Each case: the rule that should fire, its input and the whole normaliser's output.
RULE_CASES = [
    ("ansi-escapes", "\x1b[31mFAILED\x1b[0m tests/test_a.py", "FAILED tests/test_a.py"),
    ("ansi-escapes", "\x1b[1m\x1b[32m5 passed\x1b[0m", "5 passed"),
    ("ansi-escapes", "\x1b]0;title\x07text", "text"),
    ("crlf", "line one\r\nline two\r\n", "line one\nline two\n"),
    ("carriage-return", "Downloading 10%\rDownloading 55%\rDownloading 100%\ndone",
     "Downloading 100%\ndone"),
    ("timestamp", "2026-11-30T08:41:47.123Z request sent", "<timestamp> request sent"),
    ("timestamp", "started at 2026-11-30 08:41:47", "started at <timestamp>"),
    ("timestamp", "2026-11-30 08:41:47,512 INFO ready", "<timestamp> INFO ready"),
    ("timestamp", "at 2026-11-30T08:41:47+01:00.", "at <timestamp>."),
    ("pytest-summary", "5 passed in 0.12s", "5 passed in <duration>"),
    ("pytest-summary", "===== 1 failed, 2 passed, 1 warning in 61.20s (0:01:01) =====",
     "===== 1 failed, 2 passed, 1 warning in <duration> ====="),
    ("pytest-summary", "no tests ran in 0.01s", "no tests ran in <duration>"),
    ("pytest-summary", "3 passed, 2 deselected in 4.00s", "3 passed, 2 deselected in <duration>"),
    ("duration", "0.52s call     tests/test_x.py::test_y\n0.01s setup    tests/test_x.py::test_y",
     "<duration> call     tests/test_x.py::test_y\n<duration> setup    tests/test_x.py::test_y"),
    ("duration", "build took 1.234s", "build took <duration>"),
    ("duration", "query: 12.3 ms", "query: <duration>"),
    ("duration", "Ran 4 tests in 0.012s", "Ran 4 tests in <duration>"),
    ("duration", "took 3 seconds", "took <duration>"),
    ("duration", "real\t0m1.234s", "real\t<duration>"),
    ("hex-address", "<Node object at 0x7f3a2b1c9d00>", "<Node object at 0x<addr>>"),
    ("hex-address", "id 0x7f3a2b", "id 0x<addr>"),
    ("pytest-tmp", "/tmp/pytest-of-agent/pytest-3/test_save0/out.txt",
     "/tmp/pytest-of-<user>/pytest-<n>/test_save0/out.txt"),
    ("temp-path", "wrote /tmp/tmpab12cd/result.json", "wrote /tmp/<tmp>/result.json"),
    ("temp-path", "File \"/tmp/tmpk3j_x9ab.py\", line 3", "File \"/tmp/<tmp>.py\", line 3"),
    ("temp-path", "/tmp/tmp.Ab3dE6gH9k/x", "/tmp/<tmp>/x"),
    ("temp-path", "/var/tmp/tmpq1w2e3r4", "/var/tmp/<tmp>"),
    ("pid", "server started, pid 1234", "server started, pid <pid>"),
    ("pid", "PID: 99 exited", "PID: <pid> exited"),
    ("pid", "worker pid=5123", "worker pid=<pid>"),
    ("trailing-whitespace", "a   \nb\t\n  c  ", "a\nb\n  c"),
]


@pytest.mark.parametrize(("name", "text", "expected"), RULE_CASES, ids=[f"{c[0]}:{c[1][:30]}" for c in RULE_CASES])
def test_rule(name: str, text: str, expected: str) -> None:
    assert rule(name).pattern.search(text), f"{name} does not match {text!r}"
    assert normalise_output(text) == expected


def test_each_rule_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Dropping any one rule changes the output for at least one of its cases.
    for dropped in NORMALISE_RULES:
        rest = tuple(r for r in NORMALISE_RULES if r is not dropped)
        monkeypatch.setattr(normalise_module, "NORMALISE_RULES", rest)
        cases = [(text, expected) for name, text, expected in RULE_CASES if name == dropped.name]
        assert cases, f"no test case for rule {dropped.name}"
        assert any(normalise_module.normalise_output(text) != expected for text, expected in cases), dropped.name
    monkeypatch.undo()


@pytest.mark.parametrize(
    "text",
    [
        "x = 0x10",
        "mask = 0xFFFF",
        "Python 3.11.7",
        "requires numpy>=1.26.4",
        "src/textkit/chunk.py:42: AssertionError",
        "  File \"/workspace/app.py\", line 17, in main",
        "assert cache.get(3) == 1.5",
        "time.sleep(0.5)",
        "sleep 2",
        "2026-11-30",
        "/tmp/output.txt",
        "/workspace/tmp/cache.json",
        "rapid 300",
        "tests/test_lru.py::test_eviction PASSED                                   [100%]",
        "    def f(x):\n        return x\n",
        "",
    ],
)
def test_ordinary_content_is_left_alone(text: str) -> None:
    assert normalise_output(text) == text


SAMPLE = (
    "\x1b[1m============ test session starts ============\x1b[0m\r\n"
    "platform linux -- Python 3.11.7, pytest-7.2.1\r\n"
    "rootdir: /workspace   \r\n"
    "collected 5 items\n"
    "tests/test_a.py ..F..                        [100%]\n"
    "E   AssertionError: <Cache object at 0x7f3a2b1c9d00> != 3\n"
    "tmp_path = PosixPath('/tmp/pytest-of-agent/pytest-12/test_a0')\n"
    "log written to /tmp/tmpab12cd_x/log.txt at 2026-11-30T08:41:47.123Z by pid 4321\n"
    "0.52s call     tests/test_a.py::test_slow\n"
    "fetching 3%\rfetching 97%\rfetching 100%\n"
    "\x1b[31m=========== 1 failed, 4 passed in 1.07s (0:00:01) ===========\x1b[0m\n"
)


def test_whole_pytest_run() -> None:
    assert normalise_output(SAMPLE) == (
        "============ test session starts ============\n"
        "platform linux -- Python 3.11.7, pytest-7.2.1\n"
        "rootdir: /workspace\n"
        "collected 5 items\n"
        "tests/test_a.py ..F..                        [100%]\n"
        "E   AssertionError: <Cache object at 0x<addr>> != 3\n"
        "tmp_path = PosixPath('/tmp/pytest-of-<user>/pytest-<n>/test_a0')\n"
        "log written to /tmp/<tmp>/log.txt at <timestamp> by pid <pid>\n"
        "<duration> call     tests/test_a.py::test_slow\n"
        "fetching 100%\n"
        "=========== 1 failed, 4 passed in <duration> ===========\n"
    )


def test_runs_that_differ_only_in_noise_normalise_to_the_same_bytes() -> None:
    other = (
        SAMPLE.replace("0x7f3a2b1c9d00", "0x7f00deadbeef")
        .replace("pytest-12", "pytest-3")
        .replace("tmpab12cd_x", "tmp9z8y7x6w")
        .replace("08:41:47.123Z", "23:59:01.5Z")
        .replace("pid 4321", "pid 17")
        .replace("0.52s", "1.91s")
        .replace("1.07s (0:00:01)", "12.40s (0:00:12)")
        .replace("fetching 3%\r", "fetching 3%\rfetching 40%\r")
    )
    assert other != SAMPLE
    assert normalise_output(other) == normalise_output(SAMPLE)


@pytest.mark.parametrize("text", [SAMPLE] + [case[1] for case in RULE_CASES])
def test_idempotent(text: str) -> None:
    once = normalise_output(text)
    assert normalise_output(once) == once


def test_idempotent_on_random_mixtures() -> None:
    pieces = ["\x1b", "[", "0m", "\x1b[0m", "\r", "\n", "\r\n", " ", "\t", "0x", "7f3a2b", "deadbeef",
              "1", ".", "5", "s", "ms", " in ", "took ", "passed", " (0:00:01)", "2026-11-30", "T",
              "08:41:47", "Z", "/tmp/", "tmp", "ab12cd", "pytest-of-", "agent/", "pytest-", "pid ",
              "=", "<", ">", "\x07", "]", "\\", "seconds", "3.11.7", "x"]
    rng = random.Random(1)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        once = normalise_output(text)
        assert normalise_output(once) == once, repr(text)


def test_public_names() -> None:
    assert set(normalise_module.__all__) == {"NormaliseRule", "NORMALISE_RULES", "normalise_output"}



#: Long runs of one kind, as a tool's output may hold them: a minified file or a JSON body on one line, a
#: progress bar's carriage returns, a column of blanks, `pid` before a gap (source: made where it is run).
LONG_RUNS = ("['x' * 10**6, '7' * 10**6, ' ' * 10**6 + 'x', '\\r' * 10**6 + 'x', 'pid' + ' ' * 10**6 + 'x', "
             "'\\t ' * 5 * 10**5 + 'x', ('x' * 79 + ' ') * 12500]")


def test_a_megabyte_run_is_normalised_in_one_pass_over_it() -> None:
    """Each rule starts only where its run starts: from every character of a run, a rule read the rest
    of it each time (quadratic), and a 1 MB line took most of an hour of the harness's CPU. Here the
    whole list takes well under a second; the bound below is hundreds of times that."""
    import subprocess
    import sys

    script = f"from endstate.agent._normalise import normalise_output\nfor t in {LONG_RUNS}:\n    normalise_output(t)\n"
    done = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
