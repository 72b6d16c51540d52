"""Tests that fail in the sandbox for want of a network it never has.

SWE-bench's harness runs a record's tests with the network on, and the older records of some
projects call a public service (requests' tests before 2.10 reach httpbin.org). endstate's
sandbox has no network, so such a test fails on the gold fix itself: `network_host` reads that
off what the test's report says was raised (name resolution, a refused or unreachable
connection, the client library's connection error), with the host it names. A connection to the
sandbox's own loopback is no such failure: a local server the test expected is not the network.
"""

from __future__ import annotations

import re

__all__ = ["network_host", "needs_the_network"]

#: What a resolver, a socket or a client library raises when the host cannot be reached.
_UNREACHABLE = re.compile(
    r"Temporary failure in name resolution|Name or service not known|No address associated with hostname"
    r"|nodename nor servname|getaddrinfo failed|gaierror|NameResolutionError|Failed to resolve"
    r"|Network is unreachable|No route to host|Connection refused|Failed to establish a new connection"
    r"|NewConnectionError|Max retries exceeded|URLError|urlopen error|ConnectionError|ConnectTimeout"
    r"|\[Errno -[235]\]|\[Errno 1(?:01|11|13)\]")
#: Where a report names the host it could not reach, most telling first (a quote escaped, as a string's repr in
#: an assertion's message writes it: `host=\\'www.google.com\\'`).
_HOST = (re.compile(r"\bhost\s*=\s*\\?['\"]([^'\"\\]+)\\?['\"]"), re.compile(r"Failed to resolve \\?['\"]([^'\"\\]+)"),
         re.compile(r"https?://(?:[^@/\s'\"]*@)?(\[[^\]]+\]|[^:/\s'\"<>)\\]+)"))
#: What a host can be: a name of labels, or an address (pytest cuts a long string's repr in its middle, `www.sphin...n.x`).
_HOSTNAME = re.compile(r"\[?[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\]?"
                       r"|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*")
_LOOPBACK = re.compile(r"localhost|127(?:\.\d+){3}|\[?::1\]?|0\.0\.0\.0|\[?::\]?")


def network_host(message: str) -> str | None:
    """The host a failed test could not reach over the network, as its report names it ("" where it
    names none); None where the failure is not the network's (or is a loopback connection's)."""
    if not _UNREACHABLE.search(message):
        return None
    for pattern in _HOST:
        hosts = [h for h in pattern.findall(message) if _HOSTNAME.fullmatch(h)]
        if hosts:
            remote = [h for h in hosts if not _LOOPBACK.fullmatch(h)]
            return remote[0] if remote else None
    return ""


def needs_the_network(test: str, host: str, others: int = 0, field: str = "") -> str:
    """The one line that says a test needs the network (`others`: how many more of `field`'s do)."""
    more = f" (and {others} more of {field})" if others else ""
    return f"test {test}{more} needs the network{f' ({host})' if host else ''}, which the sandbox does not have"
