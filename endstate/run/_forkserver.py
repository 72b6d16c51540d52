"""The fork server agent workers start from: one process that has imported the agent's
modules (and the run provider's SDK, warmed up) once, so each worker forked from it
gets a process of its own without paying those imports again.

    start_fork_server(provider)                       start it now, preloading what a run with that provider needs
    Workers().run(job_path, log_path, deadline)       one agent worker, forked from it, to its end
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from endstate.agent import KILL_MARKER, forked_main

__all__ = ["FORKS", "Workers", "preload_for", "start_fork_server", "worker", "recv"]

#: Agent workers fork from a server that imported these once (see Workers.run).
FORKS = multiprocessing.get_context("forkserver")
#: What loads on first use (the cassette session and vcrpy, the backends and the docker SDK, the shell
#: parser) is named here.
_PRELOAD = ["endstate.agent._worker", "endstate.agent._loop", "endstate.cassettes._session", "endstate.sandbox._docker",
            "endstate.sandbox._local", "bashlex", "endstate.run._forkserver"]


def preload_for(provider: str, *, foreign: bool = False) -> list[str]:
    """What the fork server imports for a run: the agent's modules and only the SDK adapter
    its provider uses (anthropic's alone takes seconds to import; scripted and replayed runs
    go through the OpenAI one), with what the SDK would otherwise do lazily in every
    worker on its first request (its chat resources, the HTTP transport, model building:
    ~150 ms, see `_forkserver_warm`) and the TLS context every client shares (~30 ms).
    A foreign agent's worker uses no SDK (its program asks the model through endstate's
    proxy, which forwards with httpx2): it gets the proxy's modules instead (the OpenAI SDK
    and its warm-up took 1.5 of a fork server's 3 CPU-seconds on a loaded machine)."""
    if foreign:
        return [*_PRELOAD, "endstate.agents._run", "httpcore2", "endstate.models._tls"]
    if provider == "anthropic":
        return [*_PRELOAD, "endstate.models._anthropic", "anthropic.resources.messages", "httpcore2",
                "endstate.models._tls"]
    return [*_PRELOAD, "endstate.models._openai", "openai.resources.chat.completions.completions", "httpcore2",
            "endstate.models._tls", "endstate.run._forkserver_warm"]


def start_fork_server(provider: str, *, foreign: bool = False) -> None:
    """Start the fork server now, so that its imports overlap the first task's container
    start-up instead of delaying its agent. Its preload is fixed when it first starts: a later
    run in the same process with another provider (or agent) imports what it needs in each
    worker instead."""
    FORKS.set_forkserver_preload(preload_for(provider, foreign=foreign))
    with _deaf_to_ctrl_c():
        multiprocessing.forkserver.ensure_running()


@contextlib.contextmanager
def _deaf_to_ctrl_c() -> Iterator[None]:
    """Start the fork server ignoring SIGINT, as it does itself only once its preload is done:
    else a Ctrl-C in a run's first seconds meets it mid-import and its traceback reaches the
    terminal. Its workers take Ctrl-C again (`worker`). Only the main thread may set a handler;
    a Ctrl-C this process meets in the moment of the spawn is lost (press it again)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def worker(job_path: str, log_path: str, conn: multiprocessing.connection.Connection,
           base_url: str | None = None, foreign: bool = False) -> None:
    """An agent worker that dies with the fork server, which dies with the run: when the
    run is killed, no orphan agent goes on calling the model or writing into the run folder.
    Ctrl-C reaches it as a KeyboardInterrupt (its fork server ignores it: `_deaf_to_ctrl_c`)."""
    import ctypes

    signal.signal(signal.SIGINT, signal.default_int_handler)

    parent = os.getppid()
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)  # Linux only
    if prctl is not None:
        prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)  # the fork server was gone before the request took effect
    if foreign:
        from endstate.agents import run_foreign_job

        forked_main(job_path, log_path, conn, base_url, run=run_foreign_job)
    else:
        forked_main(job_path, log_path, conn, base_url)


def recv(conn: multiprocessing.connection.Connection) -> object:
    try:
        return conn.recv()
    except EOFError:
        return None


class Workers:
    """The agent workers of one run, each forked from the fork server, so that a run that ends
    early (Ctrl-C, SIGTERM, a bug) can kill every one still working."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.procs: set[multiprocessing.process.BaseProcess] = set()

    def run(self, job_path: Path, log_path: Path, deadline: float, base_url: str | None = None, *,
            foreign: bool = False, cancelled: threading.Event | None = None) -> tuple[bool, str]:
        """Run one worker (`foreign`: a foreign agent's, see endstate.agents); return whether it
        reached its kill point and was SIGKILLed, and how it died if a signal the run did not
        send ended it ("" otherwise: a fault of the machinery, see `_faults`).

        Workers are forked from a fork server that has the agent's modules (the run provider's SDK,
        vcrpy, docker) imported already: each still gets a process of its own, without
        paying the imports again.
        """
        receiver, sender = FORKS.Pipe(duplex=False)
        proc = FORKS.Process(target=worker, daemon=True,
                             args=(str(job_path), str(log_path), sender, base_url, foreign))
        proc.start()
        sender.close()
        with self.lock:
            self.procs.add(proc)
        killed = ours = False
        try:
            ready = multiprocessing.connection.wait([receiver, proc.sentinel], timeout=deadline)
            if receiver in ready and receiver.poll() and recv(receiver) == KILL_MARKER:
                os.kill(proc.pid, signal.SIGKILL)  # the checkpoint task's kill: a real, uncatchable one
                killed = ours = True
            elif not ready:
                proc.kill()
                ours = True
            proc.join()
        finally:
            receiver.close()
            with self.lock:
                self.procs.discard(proc)
        code = proc.exitcode or 0
        stopping = cancelled is not None and cancelled.is_set()
        return killed, "" if ours or code >= 0 or stopping else f"killed by {signal.Signals(-code).name}"

    def kill_all(self) -> None:
        with self.lock:
            for proc in list(self.procs):
                with contextlib.suppress(ProcessLookupError, ValueError):
                    proc.kill()
