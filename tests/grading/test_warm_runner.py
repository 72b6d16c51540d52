"""The warm entry point, in Docker: a pytest run forked from it is the run a fresh
process would have been (user, groups, environment, argv, limits, umask, working folder
and import path), the end state cannot ask it for a run of its own, and where it is
not there the run starts cold by itself."""

from __future__ import annotations

import json

import pytest

from endstate.grading import prepare_grading_sandbox, seal_overlay, stage_holdout
from endstate.grading._testrun import SCRATCH_DIR, WARM_DIR, run_tests, start_warm_runner
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, build_image
from endstate.sandbox._tree import FileEntry

pytestmark = pytest.mark.docker

#: A test that writes down what its process sees, and what its parent is.
FACTS = b'''import json, os, random, resource, sys


def test_facts():
    parent = open("/proc/%d/cmdline" % os.getppid(), "rb").read().split(b"\\0")
    umask = os.umask(0)
    os.umask(umask)
    facts = {
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())],
        "env": dict(os.environ), "argv": sys.argv[1:], "cwd": os.getcwd(), "umask": umask,
        "path": [p for p in sys.path if "site-packages" not in p and "dist-packages" not in p],
        "fsize": resource.getrlimit(resource.RLIMIT_FSIZE), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
        "flags": [sys.flags.no_user_site, sys.flags.dont_write_bytecode, sys.flags.hash_randomization],
        "hash": hash("endstate"), "random": random.random(),
        "warm": any(word == b"--serve" for word in parent),
    }
    name = "facts-%s.json" % ("warm" if facts["warm"] else "cold")  # in the run's scratch copy
    with open(name, "w") as out:
        json.dump(facts, out)
'''

#: A test that tries to get a run of its own out of the warm server, every way it can.
KNOCK = b'''import glob, json, os, socket, struct


def ask(token):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect("/opt/endstate/warm/sock")
    body = json.dumps({"token": token, "argv": ["pytest"], "env": {}, "umask": 18, "limits": {}}).encode()
    socket.send_fds(conn, [struct.pack(">I", len(body)) + body], [0, 1, 2])
    return conn.recv(1).decode()


def test_knock():
    tokens = []
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            words = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        if any(w.endswith(b"endstate_connect.py") for w in words):
            tokens.append(words[words.index(b"/opt/endstate/warm") + 1].decode())
    try:
        open("/opt/endstate/warm/key/token").read()
        read = "read"
    except OSError as exc:
        read = type(exc).__name__
    answers = {"seen tokens": len(tokens), "token file": read, "no token": ask(""),
               "own token": [ask(t) for t in tokens], "made up": ask("0" * 32)}
    with open("knock.json", "w") as out:
        json.dump(answers, out)
'''

SLEEPY = b"import time\n\n\ndef test_sleeps():\n    time.sleep(120)\n"
PASSING = b"def test_passes():\n    assert 1 + 1 == 2\n"


@pytest.fixture(scope="module", autouse=True)
def _image():
    build_image(DEFAULT_IMAGE)  # a no-op when it is current


def _sealed(box, tests: dict[str, bytes], guards: Guards = Guards()):
    """Sealed into `box`, whose scratch copies are read just before the harness drops each (`_json`)."""
    box.kept, release = {}, box.release_folders

    def read_then_release(folders):
        for folder in folders:
            if folder.startswith(SCRATCH_DIR + "/"):
                box.kept.update(box.read_folder(folder, max_bytes=1 << 22))
        release(folders)

    box.release_folders = read_then_release
    tree = {path: FileEntry(0o644, data) for path, data in tests.items()}
    grading = seal_overlay(tree, tree, box, guards)
    stage_holdout(grading, {})
    return grading


def _json(box, name: str) -> dict:
    """The note a test left in its run's scratch copy (one run writes each name)."""
    (data,) = [entry.data for path, entry in box.kept.items() if path.rpartition("/")[2] == name]
    return json.loads(data)


def test_a_warm_run_sees_what_a_cold_one_sees():
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "warm") as box:
        grading = _sealed(box, {"tests/test_facts.py": FACTS})
        cold = run_tests(grading, "python -m pytest -q tests")
        start_warm_runner(grading)
        assert grading.warm_runner
        warm = run_tests(grading, "python -m pytest -q tests")
        assert (cold.tests, cold.failures, cold.errors, cold.canary) == (1, 0, 0, "failed"), cold
        assert (warm.tests, warm.failures, warm.errors, warm.canary) == (1, 0, 0, "failed"), warm
        assert (warm.exit_code, warm.findings) == (cold.exit_code, cold.findings) == (1, [])
        facts = {kind: _json(box, f"facts-{kind}.json") for kind in ("cold", "warm")}
    assert facts["warm"]["warm"] and not facts["cold"]["warm"]
    assert facts["cold"]["ids"][0] == 1000 != 0
    assert facts["warm"]["random"] != facts["cold"]["random"]
    for fact in ("ids", "env", "argv", "cwd", "umask", "path", "fsize", "nofile", "flags", "hash"):
        # Each run has its own scratch copy and report folder, named by a nonce: the same but for it.
        cold_fact, warm_fact = (json.dumps(facts[kind][fact]) for kind in ("cold", "warm"))
        nonces = [p.rsplit("/", 1)[-1] for p in (facts["cold"]["cwd"], facts["warm"]["cwd"])]
        assert warm_fact.replace(nonces[1], nonces[0]) == cold_fact, fact


@pytest.mark.parametrize("isolated", [True, False], ids=["own-namespaces", "shared-namespaces"])
def test_the_end_state_cannot_start_a_run_of_its_own(isolated):
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "knock") as box:
        grading = _sealed(box, {"tests/test_knock.py": KNOCK}, Guards(process_isolation=isolated))
        start_warm_runner(grading)
        run = run_tests(grading, "python -m pytest -q tests")
        assert (run.tests, run.failures, run.errors) == (1, 0, 0), run
        answers = _json(box, "knock.json")
        # A token not yet used is root's alone.
        box.put_harness_trees({f"{WARM_DIR}/key": ({"token": FileEntry(0o644, b"f" * 32)}, "private")})
        peek = box.exec(f"cat {WARM_DIR}/key/token; ls {WARM_DIR}/key")
    # In a pid namespace of its own the test process never sees the command line that carried its token;
    # sharing the container's, it sees it, and the token was used up by the run itself.
    seen = [] if isolated else ["N"]
    assert answers == {"seen tokens": len(seen), "token file": "PermissionError", "no token": "N", "own token": seen,
                       "made up": "N"}
    assert peek.exit_code != 0 and "Permission denied" in peek.stderr, peek


def test_a_run_that_times_out_leaves_the_server_serving():
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "sleepy") as box:
        grading = _sealed(box, {"slow/test_sleepy.py": SLEEPY, "tests/test_facts.py": FACTS})
        start_warm_runner(grading)
        slow = run_tests(grading, "python -m pytest -q slow", timeout=5)
        assert slow.timed_out
        left = box.exec("ps -u 1000 -o comm= | grep -v -x -e ps -e bash -e grep -e wc | wc -l")  # the test user left
        after = run_tests(grading, "python -m pytest -q tests")
        assert (after.tests, after.failures, after.errors, after.canary) == (1, 0, 0, "failed"), after
        assert _json(box, "facts-warm.json")["warm"]
    assert left.stdout.strip() == "0", left


def test_without_a_server_a_run_that_needs_namespaces_of_its_own_is_refused():
    """Only the server (root) makes a warm run's namespaces: the run never goes on without them."""
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "cold") as box:
        grading = _sealed(box, {"tests/test_facts.py": FACTS})
        grading.warm_runner = True  # as if started, but it failed at start-up
        box.put_harness_trees({WARM_DIR: ({"failed": FileEntry(0o644, b"")}, "root")})
        run = run_tests(grading, "python -m pytest -q tests")
    assert (run.exit_code, run.report_found) == (70, False) and "outside namespaces" in run.output_tail, run


def test_without_a_server_the_run_starts_by_itself():
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "cold") as box:
        grading = _sealed(box, {"tests/test_facts.py": FACTS}, Guards(process_isolation=False))
        grading.warm_runner = True  # as if started, but it failed at start-up
        box.put_harness_trees({WARM_DIR: ({"failed": FileEntry(0o644, b"")}, "root")})
        run = run_tests(grading, "python -m pytest -q tests")
        assert (run.tests, run.failures, run.errors, run.canary) == (1, 0, 0, "failed"), run
        assert not _json(box, "facts-cold.json")["warm"]
