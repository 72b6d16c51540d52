"""Which failures of a test are the sandbox's want of a network, read as reports word them."""

from __future__ import annotations

import pytest

from endstate.authoring._offline import needs_the_network, network_host


@pytest.mark.parametrize("message, host", [
    # requests 2.x over urllib3 1.x, as requests' tests of 2014 fail where httpbin.org does not resolve
    ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): Max retries exceeded "
     "with url: /get (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f3c>: Failed to "
     "establish a new connection: [Errno -3] Temporary failure in name resolution'))", "httpbin.org"),
    # requests 1.x, its vendored urllib3 naming the socket's exception class
    ("ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): Max retries exceeded with url: /get (Caused "
     "by <class 'socket.gaierror'>: [Errno -2] Name or service not known)", "httpbin.org"),
    # urllib3 2
    ("urllib3.exceptions.NameResolutionError: <urllib3.connection.HTTPSConnection object at 0x7f>: Failed to "
     "resolve 'pypi.org' ([Errno -3] Temporary failure in name resolution)", "pypi.org"),
    # the standard library, the host only in the test's own line
    ("urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n"
     ">       urllib.request.urlopen('https://example.com/x', timeout=5)", "example.com"),
    # a string's repr in an assertion's message, its quotes escaped
    ("AssertionError: assert 'x' in 'links.txt:9: [broken] https://www.google.com/image.png: HTTPSConnectionPool("
     "host=\\'www.google.com\\', port=443): Max retries exceeded with url: /image.png (Caused by NewConnectionError("
     "\\'<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -3] "
     "Temporary failure in name resolution\\'))'", "www.google.com"),
    # cut in its middle by pytest (sphinx 7985's linkcheck output): what is cut names no host, the next that does
    ("AssertionError: assert 'Not Found for url: https://www.google.com/image.png' in \"links.txt:9: [broken] "
     "https://www.sphinx-doc.org/x: HTTPSConnectionPool(host='www.sphin...n.HTTPSConnection object at 0x7f30ac81d3a0>: "
     "Failed to establish a new connection: [Errno 111] Connection refused'))\\n\"", "www.google.com"),
    ("ConnectionError: HTTPConnectionPool(host='www.exa...', port=80): Max retries exceeded", ""),
    ("socket.gaierror: [Errno -3] Temporary failure in name resolution", ""),
    ("OSError: [Errno 101] Network is unreachable", ""),
])
def test_a_failure_to_reach_a_host_is_the_network_s_and_names_the_host(message, host):
    assert network_host(message) == host


@pytest.mark.parametrize("message", [
    "AssertionError: assert 'http://httpbin.org/get' == 'http://httpbin.org/post'",
    # a server on the sandbox's own loopback that is not there is the test's setup, not the network
    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=8080): Max retries exceeded "
    "with url: / (Caused by NewConnectionError('...: Failed to establish a new connection: [Errno 111] Connection "
    "refused'))",
    "ConnectionRefusedError: [Errno 111] Connection refused\n>   urlopen('http://localhost:5000/')",
    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='::1', port=8080): Max retries exceeded",
    "",
])
def test_any_other_failure_is_not_the_network_s(message):
    assert network_host(message) is None


def test_the_refusal_is_one_line_naming_the_test_and_the_host():
    assert needs_the_network("t.py::test_get", "httpbin.org") == \
        "test t.py::test_get needs the network (httpbin.org), which the sandbox does not have"
    assert needs_the_network("t.py::test_get", "", 3, "PASS_TO_PASS") == \
        "test t.py::test_get (and 3 more of PASS_TO_PASS) needs the network, which the sandbox does not have"
