"""The loopback httpbin: a project whose tests read HTTPBIN_URL (requests before 2.9) gets httpbin served
from its own test process, in the agent's sandbox and in the grading container alike."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from endstate.authoring._loopback import LOOPBACK_HTTPBIN, LOOPBACK_SAID, loopback_files, loopback_requirements
from endstate.authoring._swebench import read_instances, write_instance
from endstate.authoring._taskimage import image_files
from endstate.checks._check import check_task
from endstate.run import resolve_graders
from endstate.sandbox import DEFAULT_IMAGE, FileEntry
from endstate.task import load_task
from tests.authoring.test_swebench import _committed, _write

READS = b"import os\n\nHTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n"


def test_only_a_project_that_reads_httpbin_url_gets_it():
    plain = {"setup.py": FileEntry(0o644, b"from setuptools import setup\nsetup(name='calc', version='1.0')\n"),
             "test_calc.py": FileEntry(0o644, b"def test_x():\n    assert 1\n")}
    reads = {**plain, "test_requests.py": FileEntry(0o644, READS)}
    # A link's target that names it is not the project's code reading it.
    linked = {**plain, "docs/x.py": FileEntry(0o777, b"HTTPBIN_URL", link="../HTTPBIN_URL.py")}
    assert loopback_requirements(plain) == loopback_requirements(linked) == [] and loopback_files(plain) == {}
    assert loopback_requirements(reads)[0] == "httpbin"
    files = loopback_files(reads)
    points = files["endstate_loopback_httpbin-1.dist-info/entry_points.txt"].data.decode()
    assert points == "[pytest11]\nendstate-httpbin = endstate_loopback_httpbin\n"
    compile(files["endstate_loopback_httpbin.py"].data, "endstate_loopback_httpbin.py", "exec")
    record = files["endstate_loopback_httpbin-1.dist-info/RECORD"].data.decode().splitlines()
    assert sorted(line.split(",")[0] for line in record) == sorted(files)
    # beside the project's own metadata, never in its place
    both = image_files(reads, "1.0")
    assert "calc-1.0.dist-info/METADATA" in both and "endstate_loopback_httpbin.py" in both
    assert set(image_files(plain, "1.0")) == {p for p in both if p.startswith("calc-")}


#: A client of 2014's shape: its tests call httpbin at HTTPBIN_URL, else httpbin.org.
FETCH = ("import json\nimport urllib.request\n\n\ndef args_of(url):\n"
         "    with urllib.request.urlopen(url, timeout=10) as response:\n        return {}\n")
TESTS = ("import http.client\nimport json\nimport os\nimport urllib.parse\nimport urllib.request\n\nfrom fetch import args_of\n\n"
         "HTTPBIN = os.environ.get('HTTPBIN_URL', 'http://httpbin.org/')\n\n\n"
         "def test_status():\n    assert urllib.request.urlopen(HTTPBIN + 'status/204', timeout=10).status == 204\n\n\n"
         "def test_kept_alive():  # as httpbin.org said it (requests 0.14's test_connection_keepalive_and_close)\n"
         "    connection = http.client.HTTPConnection(urllib.parse.urlsplit(HTTPBIN).netloc, timeout=10)\n"
         "    for path in ('/get', '/bytes/3', '/get'):\n        connection.request('GET', path)\n"
         "        response = connection.getresponse()\n        response.read()\n"
         "        assert response.getheader('Connection') == 'keep-alive', response.getheaders()\n\n\n"
         "def test_chunked_upload():  # httpbin takes it from gunicorn alone; httpbin.org's took it\n"
         "    asked = urllib.request.Request(HTTPBIN + 'post', data=iter([b'a', b'b']), method='POST',\n"
         "                                   headers={'Content-Type': 'application/octet-stream'})\n"
         "    assert json.load(urllib.request.urlopen(asked, timeout=10))['data'] == 'ab'\n\n\n"
         "def test_served_here():\n    assert HTTPBIN == 'http://%s:%d/'\n" % LOOPBACK_HTTPBIN)


def _diff(clone: Path, path: str, text: str) -> str:
    """The patch that makes `path` of the clone's commit read `text` (the clone left as it was)."""
    (clone / path).write_text(text)
    diff = subprocess.run(["git", "-C", str(clone), "diff"], check=True, capture_output=True, text=True).stdout
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "--", path], check=True)
    return diff


@pytest.mark.docker
def test_a_record_whose_tests_call_httpbin_checks_out_against_the_loopback_one(tmp_path):
    clone = tmp_path / "repos" / "me__fetch"
    (clone / "tests").mkdir(parents=True)
    (clone / "fetch.py").write_text(FETCH)
    (clone / "tests" / "test_fetch.py").write_text(TESTS)
    (clone / "README").write_text("fetch\n")
    base = _committed(clone, "fetch")
    fixed = FETCH.replace("return {}", "return json.loads(response.read().decode())['args']")
    added = TESTS + "\n\ndef test_args():\n    assert args_of(HTTPBIN + 'get?a=1&b=two') == {'a': '1', 'b': 'two'}\n"
    line = {
        "instance_id": "me__fetch-7", "repo": "me/fetch", "base_commit": base,
        "problem_statement": "args_of ignores the response",
        "patch": _diff(clone, "fetch.py", fixed), "test_patch": _diff(clone, "tests/test_fetch.py", added),
        "FAIL_TO_PASS": ["tests/test_fetch.py::test_args"],
        "PASS_TO_PASS": ["tests/test_fetch.py::test_status", "tests/test_fetch.py::test_kept_alive",
                         "tests/test_fetch.py::test_chunked_upload", "tests/test_fetch.py::test_served_here"],
    }
    said: list[str] = []
    task = load_task(write_instance(read_instances(_write(tmp_path, [line]))[0][0][1], tmp_path / "repos",
                                    tmp_path / "out", log=said.append, backend="docker", image=DEFAULT_IMAGE))
    assert f"# {LOOPBACK_SAID}\n" in (task.root / "task.toml").read_text()
    assert "httpbin==" in (task.root / "image" / "requirements.txt").read_text()
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["tests_pass"]["min_tests"] == 4 and args["holdout"]["min_tests"] == 1, json.dumps(args)
    # Graded for real: the fixture fails the held-out test, the gold patch passes every test, in namespaces
    # of its own (a loopback of its own) under the harness's guarded runner.
    report = check_task(task, resolve_graders(task), "docker", DEFAULT_IMAGE)
    assert report.ok, report
