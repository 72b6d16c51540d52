"""A Harbor task's build behind an intercepting proxy: the host's certificates for its RUN steps.

Where the network reaches package registries only through a proxy that signs its own
certificates (a company's egress, this kind of build machine), the host trusts that proxy's
authority and a task's base image does not: `RUN pip install ...`, `npm ci`, `cargo fetch`,
`go mod download` then fail on "certificate verify failed". When a task's Dockerfile fails
so, the import builds each image it names FROM again with the host's bundle added and the
variables those tools read pointing at it, and builds the task on that. Only such a task
gets it, and the import says so; the bundle holds certificates only, never a key.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["CA_PATH", "host_bundle", "refused_by_tls", "with_host_certificates"]

#: Where the host's bundle goes in the image, and what reads it there.
CA_PATH = "/usr/local/share/endstate-host-ca.pem"
_VARIABLES = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
              "CARGO_HTTP_CAINFO", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE")
#: What a TLS client prints when it does not trust the authority that signed a certificate.
_REFUSED = ("certificate verify failed", "self-signed certificate", "self signed certificate",
            "unable to get local issuer certificate", "certificate signed by unknown authority",
            "SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "SSL certificate problem",
            "invalid peer certificate", "UnknownIssuer")


def refused_by_tls(build_output: str) -> bool:
    """Whether a failed build failed on a certificate its image does not trust."""
    return any(said.lower() in build_output.lower() for said in _REFUSED)


def host_bundle() -> Path | None:
    """The host's bundle of trusted certificates, when it trusts more than its system's
    (a file named by SSL_CERT_FILE or REQUESTS_CA_BUNDLE, or local authorities installed)."""
    for variable in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"):
        named = os.environ.get(variable)
        if named and Path(named).is_file():
            return Path(named)
    local = Path("/usr/local/share/ca-certificates")
    system = Path("/etc/ssl/certs/ca-certificates.crt")
    if system.is_file() and local.is_dir() and any(local.rglob("*.crt")):
        return system
    return None


def with_host_certificates(images: list[str], bundle: Path,
                           docker: Callable[..., subprocess.CompletedProcess]) -> dict[str, str]:
    """Each image as one built on it with `bundle` trusted by what its RUN steps run; the images
    are tagged by what they hold, so a second task on the same base builds nothing."""
    pem = bundle.read_bytes()
    env = " ".join(f"{name}={CA_PATH}" for name in _VARIABLES)
    made = {}
    for image in images:
        key = hashlib.sha256(image.encode() + b"\0" + pem).hexdigest()[:16]
        tag = f"endstate-hostca:{key}"
        if docker("image", "inspect", tag).returncode != 0:
            with tempfile.TemporaryDirectory(prefix="endstate-hostca-") as folder:
                (Path(folder) / "host-ca.pem").write_bytes(pem)
                (Path(folder) / "Dockerfile").write_text(f"FROM {image}\nCOPY host-ca.pem {CA_PATH}\nENV {env}\n")
                built = docker("build", "--network", "none", "-q", "-t", tag, folder)
            if built.returncode != 0:
                return {}
        made[image] = tag
    return made
