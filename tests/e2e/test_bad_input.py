"""Bad input: one clear line naming the file, field or task, a non-zero exit, no
traceback, and the other tasks' results kept."""

from __future__ import annotations

import http.server
import shutil
import threading
from pathlib import Path

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, TASKS

from endstate.run import read_results

GOOD_TASK = "compaction-trace-config-keys"  # three hacks: the checks below are about the other task
OTHER_TASK = "bugfix-booking-overlap"
# No engine answers here: a command that got past its checks would stop on that instead.
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}


def no_traceback(ran) -> None:
    assert "Traceback" not in ran.out + ran.err, ran


@pytest.fixture
def suite(tmp_path) -> Path:
    folder = tmp_path / "tasks"
    for task_id in (GOOD_TASK, OTHER_TASK):
        shutil.copytree(TASKS / task_id, folder / task_id)
    return folder


def test_unknown_provider_lists_the_known_ones():
    ran = run_endstate("eval", "--model", "acme/some-model", "--task", GOOD_TASK)
    assert ran.code == 2, ran
    assert "openai" in ran.err and "anthropic" in ran.err and "scripted" in ran.err
    no_traceback(ran)


def test_missing_api_key_is_named_before_any_container_starts():
    ran = run_endstate("eval", "--model", "openai/gpt-4.1-2025-04-14", "--task", GOOD_TASK,
                       env={"OPENAI_API_KEY": "", "DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert "OPENAI_API_KEY" in ran.err
    no_traceback(ran)


@pytest.mark.parametrize("socket_file", [False, True], ids=["no-socket", "dead-socket"])
@pytest.mark.parametrize("command", [
    ("tasks", "check"), ("eval", "--model", "scripted/reference", "--out", "out"),
    ("record", "--model", "scripted/reference", "--cassettes", "cassettes", "--out", "out"),
    ("eval", "--replay", str(CASSETTES / "scripted-reference"), "--out", "out")])
def test_a_configured_engine_that_does_not_answer_is_named_not_replaced_by_bubblewrap(tmp_path, command, socket_file):
    import socket

    command = tuple(str(tmp_path / part) if part in ("out", "cassettes") else part for part in command)
    where = tmp_path / "docker.sock" if socket_file else Path("/nonexistent.sock")
    if socket_file:  # a socket that exists and that nothing listens on, as a stopped engine leaves it
        dead = socket.socket(socket.AF_UNIX)
        dead.bind(str(where))
        dead.close()
    ran = run_endstate(*command, "--task", GOOD_TASK, "--sandbox", "auto", env={"DOCKER_HOST": f"unix://{where}"})
    assert ran.code == 2, ran
    [line] = [line for line in ran.err.splitlines() if f"DOCKER_HOST=unix://{where}" in line]
    assert "but none answers" in line and "--sandbox local" in line, ran.err
    assert not (tmp_path / "out" / "results.json").exists()  # nothing was scored
    assert not list(tmp_path.rglob("*.cassette"))  # nor recorded
    no_traceback(ran)


def test_no_engine_when_docker_is_asked_for():
    ran = run_endstate("tasks", "check", "--sandbox", "docker", "--task", GOOD_TASK,
                       env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert "no Docker engine answers" in ran.err and "--sandbox local" in ran.err
    no_traceback(ran)


@pytest.mark.docker
def test_malformed_manifest_is_named_and_the_other_task_still_checked(suite):
    manifest = suite / OTHER_TASK / "task.toml"
    manifest.write_text("colour = 'red'\n" + manifest.read_text())
    ran = run_endstate("tasks", "check", "--suite", str(suite))
    assert ran.code == 2, ran
    assert str(manifest) in ran.err and "unknown field `colour`" in ran.err
    assert f"ok   {GOOD_TASK}" in ran.out
    no_traceback(ran)


@pytest.mark.docker
def test_a_suite_with_no_task_that_loads_writes_no_run_to_refuse_the_next(suite, tmp_path):
    for task_id in (GOOD_TASK, OTHER_TASK):
        manifest = suite / task_id / "task.toml"
        manifest.write_text("colour = 'red'\n" + manifest.read_text())
    out = tmp_path / "out"
    ran = run_endstate("eval", "--suite", str(suite), "--model", "scripted/reference", "--out", str(out))
    assert ran.code == 2, ran
    from endstate.task._manifest import Manifest

    fields = ", ".join(Manifest.__struct_encode_fields__)
    assert [line for line in ran.err.splitlines() if "unknown field `colour`" in line] == [
        f"endstate: error: {suite / t / 'task.toml'}: unknown field `colour` (valid fields there: {fields}) (task skipped)"
        for t in sorted((GOOD_TASK, OTHER_TASK), key=lambda t: (suite / t).as_posix())], ran
    assert not out.exists()  # after the fix, the same eval is not refused as "already holds a run"
    empty = tmp_path / "empty"
    empty.mkdir()
    ran = run_endstate("eval", "--suite", str(empty), "--model", "scripted/reference", "--out", str(out), env=NO_ENGINE)
    assert ran.code == 2 and ran.err == (f"endstate: error: no task in {empty}: a task is a folder holding task.toml "
                                         f"(`endstate tasks new ID --suite {empty}` makes one)\n"), ran
    assert not out.exists()


@pytest.mark.docker
def test_grader_that_does_not_import_is_named(suite):
    manifest = suite / OTHER_TASK / "task.toml"
    manifest.write_text(manifest.read_text().replace("endstate.grading:no_new_skips", "endstate.gradng:no_new_skips"))
    ran = run_endstate("tasks", "check", "--suite", str(suite))
    assert ran.code == 2, ran
    assert OTHER_TASK in ran.err and "endstate.gradng" in ran.err and "does not import" in ran.err
    assert f"ok   {GOOD_TASK}" in ran.out
    no_traceback(ran)


@pytest.mark.docker
def test_symlink_escaping_the_fixture_is_refused(suite, tmp_path):
    secret = tmp_path / "outside.txt"
    secret.write_text("not for the agent\n")
    link = suite / OTHER_TASK / "fixture" / "notes.txt"
    link.symlink_to(secret)
    ran = run_endstate("tasks", "check", "--suite", str(suite))
    assert ran.code == 1, ran
    assert str(link) in ran.out and "outside" in ran.out
    assert f"ok   {GOOD_TASK}" in ran.out
    no_traceback(ran)


def _replay(suite: Path, cassettes: Path, out: Path):
    return run_endstate("eval", "--model", "scripted/reference", "--suite", str(suite), "--replay", str(cassettes),
                        "--out", str(out))


@pytest.fixture
def cassettes(tmp_path) -> Path:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    for task_id in (GOOD_TASK, OTHER_TASK):
        shutil.copy(CASSETTES / "scripted-reference" / f"{task_id}.cassette", folder)
    return folder


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


# How a cassette is spoiled, and what the error must say about it.
DAMAGE = {
    "missing": (lambda p: p.unlink(), "no cassette for task"),
    "truncated": (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "truncated or corrupt"),
    "flipped-bytes": (_flip_a_byte, "truncated or corrupt"),
    "other-task": (lambda p: shutil.copy(p.parent / f"{GOOD_TASK}.cassette", p), f"recorded for task {GOOD_TASK}"),
    "other-model": (lambda p: shutil.copy(CASSETTES / "scripted-null" / p.name, p), "recorded with model scripted/null"),
    "directory": (lambda p: (p.unlink(), p.mkdir()), "is a directory, not a cassette file"),
}


def no_traceback_in_logs(out: Path) -> None:
    for log in out.rglob("*.log"):
        assert "Traceback" not in log.read_text(errors="replace"), log


@pytest.mark.docker
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_cassette_is_refused_before_its_task_starts(suite, cassettes, tmp_path, damage):
    target = cassettes / f"{OTHER_TASK}.cassette"
    spoil, says = DAMAGE[damage]
    spoil(target)
    out = tmp_path / "out"
    ran = _replay(suite, cassettes, out)
    assert ran.code == 2, ran
    [line] = [line for line in ran.err.splitlines() if str(target) in line]
    assert line.startswith("endstate: error: ") and says in line and line.endswith("(task skipped)"), line
    results = {t.task_id: t for t in read_results(out).tasks}
    assert list(results) == [GOOD_TASK] and results[GOOD_TASK].outcome == "pass", results
    assert not (out / "work" / OTHER_TASK).exists()  # no sandbox, no agent: nothing ran for it
    no_traceback(ran)
    no_traceback_in_logs(out)


def test_bad_cassettes_are_found_before_any_container_starts(suite, cassettes, tmp_path):
    """No engine at all: every cassette is checked before one would be needed."""
    for task_id, damage in ((GOOD_TASK, "flipped-bytes"), (OTHER_TASK, "directory")):
        DAMAGE[damage][0](cassettes / f"{task_id}.cassette")
    ran = run_endstate("eval", "--suite", str(suite), "--replay", str(cassettes), "--sandbox", "docker",
                       "--out", str(tmp_path / "out"), env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert f"cassette {cassettes / GOOD_TASK}.cassette is truncated or corrupt" in ran.err, ran
    assert f"{cassettes / OTHER_TASK}.cassette is a directory" in ran.err, ran
    assert "Docker" not in ran.err and not (tmp_path / "out").exists(), ran
    no_traceback(ran)


def test_a_folder_of_two_models_asks_for_model(suite, cassettes, tmp_path):
    DAMAGE["other-model"][0](cassettes / f"{OTHER_TASK}.cassette")
    ran = run_endstate("eval", "--suite", str(suite), "--replay", str(cassettes), "--out", str(tmp_path / "out"),
                       env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert "recorded with 2 models: scripted/null (1:" in ran.err and "pass --model" in ran.err, ran
    no_traceback(ran)


def test_an_option_that_contradicts_the_recorded_settings_is_refused(suite, cassettes, tmp_path):
    import msgspec

    from endstate.cassettes import load
    from endstate.cassettes._format import write
    from endstate.models import RunSettings

    for path in cassettes.iterdir():  # as a format-2 recording would have them
        recording = load(path)
        header = msgspec.structs.replace(recording.header, format_version=2, settings=RunSettings(seed=7))
        write(path, msgspec.structs.replace(recording, header=header))
    ran = run_endstate("eval", "--suite", str(suite), "--replay", str(cassettes), "--seed", "3",
                       "--out", str(tmp_path / "out"), env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert f"--seed 3 contradicts the cassettes in {cassettes}, recorded with seed 7: drop --seed" in ran.err, ran
    no_traceback(ran)


def test_unreachable_model_server_is_refused_before_any_container_starts(tmp_path):
    ran = run_endstate("eval", "--model", "openai-compatible/nothing", "--base-url", "http://127.0.0.1:9/v1",
                       "--task", GOOD_TASK, "--out", str(tmp_path / "out"),
                       env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert ran.code == 2, ran
    assert "nothing answers at http://127.0.0.1:9/v1" in ran.err and "serve-local" in ran.err
    no_traceback(ran)


class _Failing(http.server.BaseHTTPRequestHandler):
    """A model server that answers every request with HTTP 500 or with a body that is not JSON."""

    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        broken = self.server.mode == "non-json"
        self.send_response(200 if broken else 500)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"<html>oops</html>" if broken else b'{"error": {"message": "boom"}}')

    def log_message(self, *args):
        pass


@pytest.mark.docker
@pytest.mark.parametrize("mode", ["http-500", "non-json"])
def test_a_failing_model_server_is_an_error_for_each_task_not_a_crash(suite, tmp_path, mode):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    server.mode = mode
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ran = run_endstate("eval", "--model", "openai-compatible/broken", "--base-url",
                           f"http://127.0.0.1:{server.server_address[1]}/v1", "--suite", str(suite), "-j", "2",
                           "--out", str(tmp_path / "out"))
    finally:
        server.shutdown()
    assert ran.code == 1, ran
    results = read_results(tmp_path / "out").tasks
    assert [t.task_id for t in results] == sorted([GOOD_TASK, OTHER_TASK])  # both kept, both graded apart
    for result in results:
        assert result.outcome == "error" and result.stop_reason == "model_error", result
        assert ("HTTP 500" in result.reason) if mode == "http-500" else ("JSON" in result.reason), result.reason
    no_traceback(ran)
