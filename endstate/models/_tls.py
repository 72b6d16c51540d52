"""The TLS context every model client shares within a process.

Building one reads the CA bundle (20-40 ms); httpx would build a new one for every
client. The runner's fork server imports this module, so agent workers forked from it
start with the context already made.
"""

from __future__ import annotations

import httpx2

__all__ = ["CONTEXT"]

#: The context httpx's defaults would build (its CA bundle, SSL_CERT_FILE/SSL_CERT_DIR honoured).
CONTEXT = httpx2.create_ssl_context()
