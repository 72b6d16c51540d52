"""Ctrl-C and the fork server agent workers start from: the server never prints a traceback
for it, its workers take it as a KeyboardInterrupt. Each check runs in a fresh interpreter,
which starts a fork server of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _start(script: str) -> subprocess.Popen[str]:
    # As a terminal starts it: SIGINT not ignored, whatever this process inherited (a suite started in the
    # background of a script inherits SIGINT ignored, and Python then leaves it ignored).
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_a_ctrl_c_while_the_fork_server_imports_prints_no_traceback():
    # The anthropic preload takes the server seconds to import: 0.3 s in, the Ctrl-C meets it mid-import
    # (5 of 5 printed a traceback before it started deaf to SIGINT).
    proc = _start("""
        import sys, time
        from endstate.run._forkserver import start_fork_server
        try:
            start_fork_server("anthropic")
            print("started", flush=True)
            time.sleep(60)
        except KeyboardInterrupt:
            sys.exit(130)
    """)
    assert proc.stdout.readline() == "started\n"
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: every process of the group
    _, err = proc.communicate(timeout=120)  # the server holds stderr too: this waits for it to end
    assert proc.returncode == 130 and err == "", err


def test_a_worker_forked_from_the_deaf_server_takes_ctrl_c_again(tmp_path):
    job = tmp_path / "job"
    os.mkfifo(job)  # the worker blocks reading its job here, with its signal handlers in place
    proc = _start(f"""
        from endstate.run._forkserver import FORKS, start_fork_server, worker
        start_fork_server("openai")
        receiver, sender = FORKS.Pipe(duplex=False)
        child = FORKS.Process(target=worker, args=({str(job)!r}, {str(tmp_path / "log")!r}, sender), daemon=True)
        child.start()
        print(child.pid, flush=True)
        child.join()
    """)
    pid, log = int(proc.stdout.readline()), tmp_path / "log"
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:  # it opens its log after setting its handlers
        time.sleep(0.05)
    status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    sigint = 1 << (signal.SIGINT - 1)
    caught, ignored = int(status["SigCgt"], 16) & sigint, int(status["SigIgn"], 16) & sigint
    with open(job, "wb"):  # an empty job: the worker fails to read it and ends
        pass
    proc.communicate(timeout=60)
    assert caught and not ignored, status["SigCgt"] + " " + status["SigIgn"]
