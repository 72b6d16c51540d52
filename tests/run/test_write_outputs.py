"""The one write helper of run outputs: an OSError is one line naming the folder, the old
bytes stay, no .tmp is left behind, and the last save names what it could not keep."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from endstate.errors import WriteError
from endstate.run import RunCard, RunResult, TaskResult, read_results, write_atomically, write_results
from endstate.run._faults import save_results

CARD = RunCard(endstate_version="0", model="scripted/reference", provider="scripted", temperature=0.0, seed=0,
               retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker", image="i",
               image_id="sha256:1", task_pack_hash="abc", tasks=2)


def _fail_with(monkeypatch, code: int) -> None:
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("results.json"):
            raise OSError(code, os.strerror(code), str(dst))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.parametrize(("code", "words"), [(errno.ENOSPC, "disk full; free space there or pass another --out"),
                                             (errno.EDQUOT, "disk full (quota exceeded); free space there"),
                                             (errno.EROFS, "read-only file system; pass another --out")])
def test_a_refused_write_is_one_line_and_keeps_the_old_bytes(tmp_path, monkeypatch, code, words):
    good = RunResult(CARD, [TaskResult("a", "bugfix", "pass")])
    write_results(good, tmp_path)
    before = (tmp_path / "results.json").read_bytes()
    _fail_with(monkeypatch, code)
    with pytest.raises(WriteError) as caught:
        write_results(RunResult(CARD, []), tmp_path)
    assert str(caught.value).startswith(f"cannot write {tmp_path}: {words}")
    assert (tmp_path / "results.json").read_bytes() == before  # never "tasks": [] over a good file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # no .tmp


def test_the_last_save_that_fails_names_what_finished(tmp_path, monkeypatch):
    write_results(RunResult(CARD, []), tmp_path)
    _fail_with(monkeypatch, errno.ENOSPC)
    monkeypatch.setattr("endstate.run._faults.disk_full", lambda folder: "the host's disk is full")
    finished = RunResult(CARD, [TaskResult("a", "bugfix", "pass"), TaskResult("b", "bugfix", "fail", attempt=1)])
    save_results(finished, tmp_path, last=False)  # a full disk mid-run: the next save tries again
    with pytest.raises(WriteError) as caught:
        save_results(finished, tmp_path, last=True)
    assert str(caught.value).startswith(f"cannot write {tmp_path}: disk full")
    assert "finished: a pass, b.attempt-1 fail" in str(caught.value)
    assert not list(tmp_path.glob("*.tmp"))


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a tmpfs at a fresh folder with the options asked for; unmounted after the test."""
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        where = tmp_path / f"mnt{len(mounted)}"
        where.mkdir()
        ran = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
        if ran.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {ran.stderr.decode().strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_real_full_tmpfs_keeps_the_last_good_results(tmpfs):
    folder = tmpfs("size=64k")
    good = RunResult(CARD, [TaskResult("a", "bugfix", "pass")])
    write_results(good, folder)
    big = RunResult(CARD, [TaskResult(f"t{i}", "bugfix", "pass", reason="x" * 400) for i in range(400)])
    with pytest.raises(WriteError, match=f"^cannot write {folder}: disk full"):
        write_results(big, folder)
    assert read_results(folder) == good
    assert sorted(p.name for p in folder.iterdir()) == ["results.json"]


def test_a_real_read_only_tmpfs_is_named_before_any_write(tmpfs):
    folder = tmpfs("ro,size=64k")
    with pytest.raises(WriteError, match=f"^cannot write {folder}: read-only file system; pass another --out$"):
        write_atomically(folder / "results.json", b"{}\n")
    with pytest.raises(WriteError, match=f"^cannot write {folder / 'runs'}: read-only file system"):
        write_atomically(folder / "runs" / "results.json", b"{}\n")
