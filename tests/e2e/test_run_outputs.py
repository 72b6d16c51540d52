"""What a run writes is never lost: an --out holding another run is refused unless told,
and a folder that refuses the bytes is one line, with what was finished kept."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_runner import run_endstate, start_endstate
from e2e_helpers import CASSETTES

from endstate.run import RunCard, RunResult, TaskResult, read_results, write_results

TASK = "bugfix-lru-eviction"
# No engine answers here: a command that got past its checks would stop on that instead.
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}


def no_traceback(ran) -> None:
    assert "Traceback" not in ran.out + ran.err, ran


def _one_line(ran, needle: str) -> str:
    [line] = [line for line in ran.err.splitlines() if needle in line]
    return line


@pytest.mark.parametrize("arm", ["live", "replay"])
@pytest.mark.parametrize("held", ["results.json", "run.json", "run-2/results.json"])
def test_eval_refuses_an_out_that_holds_another_run(tmp_path, arm, held):
    out = tmp_path / "out"
    (out / held).parent.mkdir(parents=True)
    (out / held).write_text('{"tasks": ["the known-fix arm"]}\n')
    replay = ("--replay", str(CASSETTES / "scripted-null")) if arm == "replay" else ()
    ran = run_endstate("eval", "--model", "scripted/null", "--task", TASK, "--out", str(out), *replay, env=NO_ENGINE)
    assert ran.code == 2, ran
    line = _one_line(ran, "already holds a run")
    assert str(out) in line and "--overwrite" in line and "--resume" in line, line
    assert (out / held).read_text() == '{"tasks": ["the known-fix arm"]}\n'  # nothing finished was lost
    no_traceback(ran)


def test_eval_overwrite_or_an_empty_out_gets_past_the_check(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("not a run\n")  # a folder without a run is no run to protect
    ran = run_endstate("eval", "--model", "scripted/null", "--task", TASK, "--out", str(out), env=NO_ENGINE)
    assert "already holds a run" not in ran.err and "none answers" in ran.err, ran
    (out / "results.json").write_text("{}\n")
    ran = run_endstate("eval", "--model", "scripted/null", "--task", TASK, "--out", str(out), "--overwrite",
                       env=NO_ENGINE)
    assert "already holds a run" not in ran.err and "none answers" in ran.err, ran


@pytest.fixture
def mount(tmp_path):
    """mount(kind): a fresh tmpfs that refuses writes as `kind` says: "read-only", "full" (filled to
    its last byte), or "tight" (two pages: room to start a file, not to finish a large one).
    Unmounted after the test."""
    mounted: list[Path] = []

    def mount(kind: str) -> Path:
        where = tmp_path / f"mnt-{kind}"
        where.mkdir()
        options = {"read-only": "ro,size=64k", "full": "size=64k", "tight": "size=8k"}[kind]
        ran = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True,
                             text=True)
        if ran.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {ran.stderr.strip()}")
        mounted.append(where)
        if kind == "full":
            subprocess.run(["dd", "if=/dev/zero", f"of={where / 'filler'}", "bs=4k"], capture_output=True)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.fixture
def folder(mount, request):
    """A folder that refuses writes as the test's `kind` param says (see `mount`)."""
    return mount(request.param)


WHY = {"read-only": "read-only file system; pass another", "full": "disk full; free space there or pass another",
       "tight": "disk full; free space there or pass another"}
KINDS = pytest.mark.parametrize("folder", ["full", "read-only"], indirect=True)


def _refused(ran, where: Path, kind: str, flag: str = "--out") -> None:
    assert ran.code == 2, ran
    line = _one_line(ran, "cannot write")
    assert line == f"endstate: error: cannot write {where}: {WHY[kind]} {flag}", line
    no_traceback(ran)


def _run_folder(tmp_path: Path) -> Path:
    card = RunCard(endstate_version="0", model="scripted/reference", provider="scripted", temperature=0.0, seed=0,
                   retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker", image="i",
                   image_id="sha256:1", task_pack_hash="a" * 64, tasks=1)
    write_results(RunResult(card, [TaskResult(TASK, "bugfix", "pass")]), tmp_path / "run")
    return tmp_path / "run"


@pytest.mark.docker
@KINDS
def test_eval_into_a_folder_that_refuses_writes_is_one_line(folder, request):
    kind = request.node.callspec.params["folder"]
    ran = run_endstate("eval", "--model", "scripted/reference", "--task", TASK, "--out", str(folder / "out"))
    _refused(ran, folder / "out", kind)
    assert not list(folder.rglob("*.tmp"))


@pytest.mark.docker
def test_a_disk_that_fills_mid_run_names_what_finished_and_keeps_the_last_good_results(tmp_path):
    where = tmp_path / "mnt"
    where.mkdir()
    ran = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(where)], capture_output=True, text=True)
    if ran.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {ran.stderr.strip()}")
    try:  # room for the run file and the first results, not for the task's work
        ran = run_endstate("eval", "--model", "scripted/reference", "--task", TASK, "--out", str(where / "out"))
        assert ran.code == 2, ran
        line = _one_line(ran, "cannot write")
        assert line.startswith(f"endstate: error: cannot write {where / 'out'}: disk full"), line
        assert f"finished: {TASK} infra_error" in line, line  # the disk, not the model, and named
        assert read_results(where / "out").card.model == "scripted/reference"  # the last good write, readable
        assert not list(where.rglob("*.tmp"))
        no_traceback(ran)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


@KINDS
def test_record_into_cassettes_that_refuse_writes_is_one_line(folder, request, tmp_path):
    kind = request.node.callspec.params["folder"]
    ran = run_endstate("record", "--model", "scripted/reference", "--task", TASK, "--cassettes", str(folder / "c"),
                       "--out", str(tmp_path / "out"), env=NO_ENGINE)
    _refused(ran, folder / "c", kind, "--cassettes")


@KINDS
@pytest.mark.parametrize("command", ["report", "view"])
def test_report_and_view_into_a_folder_that_refuses_writes_is_one_line(folder, request, tmp_path, command):
    kind = request.node.callspec.params["folder"]
    out = folder / "report" / ("report.html" if command == "view" else "")
    ran = run_endstate(command, str(_run_folder(tmp_path)), "--out", str(out))
    _refused(ran, folder / "report", kind)
    assert read_results(tmp_path / "run").tasks[0].outcome == "pass"


@pytest.mark.docker
@pytest.mark.alone  # interrupts a record mid-task: its timing must not share the machine
def test_an_interrupted_record_names_its_incomplete_cassettes_and_replay_refuses_them(tmp_path):
    import json
    import os
    import signal
    import time

    from endstate.cassettes import load
    from endstate.errors import CassetteError

    first, second = TASK, "compaction-rename-across-modules"
    # Every second request is answered 429 with Retry-After: 1, so each turn of the second task's agent
    # waits a second: the interrupt lands while it still records, however fast or slow the machine is.
    slowed = {**os.environ, "ENDSTATE_SCRIPTED_RATE_LIMIT": "2"}
    # The interrupt also reaches the agent's worker, whose recording it cuts short as a kill would (no end
    # marker). Another try only if the interrupt came after that recording ended, or inside a write.
    for attempt in range(4):
        cassettes, out = tmp_path / f"cassettes-{attempt}", tmp_path / f"out-{attempt}"
        proc = start_endstate("record", "--model", "scripted/reference", "--task", first, "--task", second, "-j", "1",
                              "--cassettes", str(cassettes), "--out", str(out), new_session=True, env=slowed)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:  # the first finished, the second recording
            if (out / "results.json").exists() and json.loads((out / "results.json").read_text())["tasks"] \
                    and (cassettes / f"{second}.cassette").exists():
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        try:
            complete = load(cassettes / f"{second}.cassette").complete
        except CassetteError:  # cut inside a record: named too, but `cassette show` cannot read it
            continue
        if not complete:
            break
        assert "left incomplete" not in err, err  # its agent had ended: nothing to name
    else:
        pytest.fail("four interrupts all came after the second task's recording ended")
    [line] = [line for line in err.splitlines() if "left incomplete" in line]
    assert line == (f"endstate: 1 cassette(s) in {cassettes} left incomplete: {second}.cassette; "
                    "`endstate record --resume` (same --out and --cassettes) records them again"), err
    assert "Traceback" not in err
    [finished] = json.loads((out / "results.json").read_text())["tasks"]  # nothing finished was lost
    assert (finished["task_id"], finished["outcome"]) == (first, "pass")

    shown = run_endstate("cassette", "show", str(cassettes / f"{second}.cassette"))
    assert "incomplete: no end marker" in shown.out, shown
    ran = run_endstate("eval", "--replay", str(cassettes), "--task", second, "--out", str(tmp_path / "replay"),
                       env=NO_ENGINE)  # refused before any sandbox: no engine is needed to say so
    assert ran.code == 2, ran
    line = _one_line(ran, "incomplete")
    assert f"cannot replay: cassette {cassettes / (second + '.cassette')} is incomplete" in line, line
    assert "record --resume" in line and "--match sequence" not in line, line
    no_traceback(ran)


def _with_transcript(run: Path) -> Path:
    """A transcript to export, larger than a tight disk and hardly compressible."""
    import hashlib
    import json

    text = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(400))
    (run / "transcripts").mkdir()
    (run / "transcripts" / f"{TASK}.json").write_text(json.dumps([{"role": "user", "content": text},
                                                                  {"role": "assistant", "content": "done"}]))
    return run


@KINDS
@pytest.mark.parametrize("format_", ["atif", "inspect"])
def test_export_into_a_folder_that_refuses_writes_is_one_line(folder, request, tmp_path, format_):
    kind = request.node.callspec.params["folder"]
    run = _with_transcript(_run_folder(tmp_path))
    out = folder / "x" / ("out.eval" if format_ == "inspect" else "out")  # Inspect opens .eval only
    ran = run_endstate("export", str(run), "--format", format_, "--out", str(out))
    _refused(ran, folder / "x" if format_ == "inspect" else folder / "x" / "out", kind)
    assert read_results(run).tasks[0].outcome == "pass"


@pytest.mark.parametrize("format_", ["atif", "inspect"])
def test_an_export_the_disk_cuts_short_leaves_no_part_of_a_file(mount, tmp_path, format_):
    tight = mount("tight")
    run = _with_transcript(_run_folder(tmp_path))
    out = tight / ("atif" if format_ == "atif" else "log.eval")
    ran = run_endstate("export", str(run), "--format", format_, "--out", str(out))
    _refused(ran, out if format_ == "atif" else tight, "tight")
    assert [p for p in tight.rglob("*") if p.is_file()] == []  # no empty .json, no .partial or .stamping


@pytest.mark.parametrize("kind", ["read-only", "full", "tight"])
def test_tasks_new_into_a_folder_that_refuses_writes_is_one_line_and_leaves_no_half_task(mount, tmp_path, kind):
    where = mount(kind)
    ran = run_endstate("tasks", "new", "bugfix-mine", "--suite", str(where / "suite"), cwd=tmp_path)
    _refused(ran, where if kind == "read-only" else where / "suite", kind, "--suite")
    assert not (where / "suite" / "bugfix-mine").exists()  # a second try is not refused as "already exists"


@pytest.mark.docker
@KINDS
def test_tasks_import_into_a_folder_that_refuses_writes_is_one_line(folder, request):
    from e2e_helpers import ROOT

    kind = request.node.callspec.params["folder"]
    ran = run_endstate("tasks", "import", "harbor", str(ROOT / "tests" / "data" / "harbor"), "--base",
                       "endstate-sandbox:2",
                       "--out", str(folder / "h"))
    assert ran.code == 2, ran
    line = _one_line(ran, "cannot write")  # shutil's copy gathers a full disk into one shutil.Error: read as one
    assert line.startswith(f"endstate: error: cannot write {folder}"), line
    assert line.endswith(f"{WHY[kind]} --out"), line
    no_traceback(ran)
    assert [p for p in folder.rglob("*") if p.is_file() and p.name != "filler"] == []


@pytest.mark.docker
def test_a_record_the_disk_cuts_short_names_the_incomplete_cassette(mount, tmp_path):
    where = mount("tight")
    (where / "filler").write_bytes(b"\0" * 4096)  # one page left: room to start the cassette, not to finish it
    ran = run_endstate("record", "--model", "scripted/reference", "--task", TASK, "--cassettes", str(where / "c"),
                       "--out", str(tmp_path / "out"))
    assert ran.code == 1, ran
    [task] = read_results(tmp_path / "out").tasks  # the disk, not the model, and kept
    assert (task.outcome, task.task_id) == ("infra_error", TASK) and "disk is full" in task.reason, task
    line = _one_line(ran, "left incomplete")
    assert line == (f"endstate: 1 cassette(s) in {where / 'c'} left incomplete: {TASK}.cassette; "
                    "`endstate record --resume` (same --out and --cassettes) records them again"), line
    no_traceback(ran)


@KINDS
def test_adequacy_json_into_a_folder_that_refuses_writes_is_refused_before_any_sandbox(folder, request):
    kind = request.node.callspec.params["folder"]
    ran = run_endstate("tasks", "adequacy", "--task", TASK, "--json", str(folder / "a" / "adequacy.json"),
                       env=NO_ENGINE)
    _refused(ran, folder / "a", kind, "--json")
    assert "none answers" not in ran.err  # found before the engine was asked for
