"""A Harbor task whose Dockerfile fetches over TLS, imported where the network reaches the
registries only through a proxy that signs its own certificates (this machine, and CI's).

The host trusts that proxy's authority and the task's base image does not: the import builds
the task again on its base with the host's bundle trusted, and says so."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.authoring._harborca import CA_PATH, host_bundle, refused_by_tls, with_host_certificates
from endstate.sandbox import DEFAULT_IMAGE

DATA = Path(__file__).resolve().parent.parent / "data" / "harbor"
FETCH = "https://pypi.org/simple/six/"


@pytest.mark.parametrize("said", [
    "pip._vendor.urllib3.exceptions.SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
    "self-signed certificate in certificate chain (_ssl.c:992)",
    "curl: (60) SSL certificate problem: self-signed certificate in certificate chain",
    'Get "https://proxy.golang.org/": tls: failed to verify certificate: x509: certificate signed by unknown authority',
    "npm ERR! code SELF_SIGNED_CERT_IN_CHAIN",
    "error: [60] SSL peer certificate or SSH remote key was not OK (invalid peer certificate: UnknownIssuer)",
])
def test_what_tls_clients_print_on_an_untrusted_authority_is_read_as_such(said):
    assert refused_by_tls(f"Step 3/4 : RUN fetch\n{said}\nThe command '/bin/sh -c fetch' returned a non-zero code: 1")


def test_other_build_failures_are_not():
    assert not refused_by_tls("ERROR: No matching distribution found for nosuchpackage\nreturned a non-zero code: 1")


def _docker(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, timeout=600)


@pytest.mark.docker
def test_an_image_built_with_the_host_bundle_holds_it_and_names_it_to_the_tools(tmp_path):
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    mapped = with_host_certificates([DEFAULT_IMAGE], bundle, _docker)
    tag = mapped[DEFAULT_IMAGE]
    try:
        seen = _docker("run", "--rm", "--network", "none", "--entrypoint", "sh", tag, "-c",
                       f"cat {CA_PATH}; echo $SSL_CERT_FILE $PIP_CERT $NODE_EXTRA_CA_CERTS $CARGO_HTTP_CAINFO")
        assert seen.returncode == 0, seen.stderr
        assert seen.stdout.decode() == bundle.read_text() + " ".join([CA_PATH] * 4) + "\n"
        assert with_host_certificates([DEFAULT_IMAGE], bundle, _docker) == mapped  # kept: built once
    finally:
        _docker("rmi", "-f", tag)


@pytest.mark.docker
def test_a_dockerfile_that_fetches_through_the_proxy_imports(tmp_path):
    task = tmp_path / "sh-word-count"
    shutil.copytree(DATA / "sh-word-count", task)
    dockerfile = task / "environment/Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN python3 -c \"import urllib.request; "
                          f"urllib.request.urlopen('{FETCH}', timeout=120).read()\"\n")
    plain = _docker("run", "--rm", "--network", "host", "--entrypoint", "python3", DEFAULT_IMAGE, "-c",
                    f"import urllib.request; urllib.request.urlopen('{FETCH}', timeout=120).read()")
    behind_a_proxy = plain.returncode != 0 and refused_by_tls(plain.stderr.decode())
    if plain.returncode != 0 and not behind_a_proxy:
        pytest.skip(f"no route to {FETCH} from a container: {plain.stderr.decode()[-300:]}")
    ran = run_endstate("tasks", "import", "harbor", str(task), "--out", str(tmp_path / "out"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    said = "built again with the host's certificates"
    if behind_a_proxy:  # this machine, and CI's: the base does not trust the proxy, the host does
        assert host_bundle() is not None
        assert said in ran.stdout + ran.stderr
        assert "FROM endstate-hostca:" in (tmp_path / "out/sh-word-count/image/Dockerfile").read_text()
    else:  # a direct route: nothing of the host's is added
        assert said not in ran.stdout + ran.stderr
