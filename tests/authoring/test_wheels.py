"""Which wheels the host takes for a task's image: every glibc the sandbox can run, no newer one."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from endstate.errors import SandboxUnavailable
from endstate.sandbox import _wheels


def _wheel(folder: Path, version: str, platform: str) -> None:
    """A real (tiny) binary wheel of `native-demo` for CPython 3.11 on `platform`."""
    info = f"native_demo-{version}.dist-info"
    files = {
        "native_demo/__init__.py": b"VALUE = 1\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: native-demo\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-{platform}\n".encode(),
    }
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for p, d in files.items()) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"native_demo-{version}-cp311-cp311-{platform}.whl", "w") as archive:
        for path, data in {**files, f"{info}/RECORD": record.encode()}.items():
            archive.writestr(path, data)


def _download(links: Path, dest: Path) -> list[str]:
    _wheels._pip(["--no-index", "--find-links", str(links), "--dest", str(dest), "native-demo"], "resolving native-demo")
    return sorted(p.name for p in dest.glob("*.whl"))


def test_a_manylinux_2_28_wheel_is_taken_and_one_for_a_newer_glibc_is_not(tmp_path):
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "1.0", "manylinux_2_28_x86_64")  # runs on the sandbox's glibc 2.36
    _wheel(links, "2.0", "manylinux_2_39_x86_64")  # needs a newer glibc than bookworm's
    assert _download(links, dest) == ["native_demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"]


@pytest.mark.parametrize("platform", ["manylinux_2_24_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64"])
def test_every_older_glibc_tag_is_taken(tmp_path, platform):
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "1.0", platform)
    assert _download(links, dest) == [f"native_demo-1.0-cp311-cp311-{platform}.whl"]


def test_a_wheel_only_for_a_newer_glibc_is_refused_with_what_to_do(tmp_path):
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "2.0", "manylinux_2_39_x86_64")
    with pytest.raises(SandboxUnavailable, match="--dockerfile"):
        _download(links, dest)
