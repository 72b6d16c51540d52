"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from pkgver import Spec, Version, latest, sort_versions

print(json.dumps({
    "less": see(lambda: [Version.parse("1.0.0-rc.1") < Version.parse("1.0.0"),
                         Version.parse("1.0.0") < Version.parse("1.0.0-rc.1"),
                         Version.parse("1.0.0-alpha") < Version.parse("1.0.0-alpha.1")]),
    "sorted": see(lambda: [str(v) for v in sort_versions(
        ["4.0.0", "4.0.0-beta.2", "4.0.0-alpha", "3.9.0", "4.0.0-beta.10", "4.0.0-rc.1"])]),
    "latest": see(lambda: str(latest(["5.1.0-rc.2", "5.1.0", "5.1.0-rc.1", "5.0.9"], include_prereleases=True))),
    "latest_next": see(lambda: str(latest(["5.1.0", "5.2.0-beta"], include_prereleases=True))),
    "spec": see(lambda: [Spec("<2.0.0").allows("2.0.0-rc.1", include_prereleases=True),
                         Spec(">2.0.0-rc.1").allows("2.0.0-rc.1")]),
}, sort_keys=True))
