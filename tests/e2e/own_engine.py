"""A Docker engine of the test's own, on its own socket and data root, so that a test
can restart it (or fill its disk) without touching the engine everyone else uses.
It holds only the sandbox image and the harness's runtime, loaded from the main engine."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import docker

from endstate.sandbox import DEFAULT_IMAGE
from endstate.sandbox._runtime import _image as _runtime_image


class OwnEngine:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="es-engine-", dir="/tmp"))  # a short path: a socket's limit is 108
        self.socket = self.root / "docker.sock"
        self.url = f"unix://{self.socket}"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 120) -> None:
        log = open(self.root / "dockerd.log", "ab")
        # In a network namespace of its own: a dockerd started with --bridge=none deletes the
        # host's docker0 (the main engine's default bridge) when it finds one in its namespace.
        self.proc = subprocess.Popen(
            ["unshare", "--net", "dockerd", "--host", self.url, "--data-root", str(self.root / "data"),
             "--exec-root", str(self.root / "exec"), "--pidfile", str(self.root / "docker.pid"),
             "--iptables=false", "--ip-masq=false", "--bridge=none", "--shutdown-timeout", "1",
             # Where a system containerd is found and shared, its containers stay apart from the main engine's.
             "--containerd-namespace", "endstate-own", "--containerd-plugins-namespace", "endstate-own-plugins"],
            stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                client = docker.DockerClient(base_url=self.url, timeout=5)
                client.ping()
                client.close()
                return
            except Exception:  # noqa: BLE001 - not up yet
                if self.proc.poll() is not None:
                    break
                time.sleep(0.2)
        raise RuntimeError(f"the test's own dockerd did not start: {(self.root / 'dockerd.log').read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=120)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def load_image(self, image: str = DEFAULT_IMAGE) -> None:
        """`image` and the harness's runtime built on it, from the main engine: a grading container
        mounts the runtime, and this engine, in a network namespace of its own, could not build it."""
        main = docker.from_env()
        try:
            runtime = main.images.get(_runtime_image(main, lambda _line: None))
        finally:
            main.close()
        for name in (image, *[tag for tag in runtime.tags if tag.startswith("endstate-runtime:")][:1]):
            save = subprocess.Popen(["docker", "save", name], stdout=subprocess.PIPE)
            subprocess.run(["docker", "load", "-q"], stdin=save.stdout, check=True, stdout=subprocess.DEVNULL,
                           env={**os.environ, "DOCKER_HOST": self.url})
            assert save.wait() == 0

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.url, timeout=60)

    def remove(self) -> None:
        self.stop()
        subprocess.run(["umount", "-R", str(self.root / "exec")], stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(self.root, ignore_errors=True)
