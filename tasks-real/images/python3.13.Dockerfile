# A task image on Python 3.13 (Debian trixie). Where no registry answers, endstate
# seeds debian:trixie-slim with debootstrap and builds this file unchanged (its
# packages come from Debian's mirrors, like endstate's own image).
#
# What the harness needs from any task image: bash, coreutils, setpriv (util-linux),
# python3 with pytest importable, user `agent` (uid 1000) and /workspace owned by it.
# pytest and its dependencies are unpacked into /opt/endstate/pytest, not installed
# into the system's site-packages, so the project's imports can never resolve to them;
# a .pth file puts that folder at the end of sys.path so `python -m pytest` works.
FROM debian:trixie-slim

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=C.UTF-8 \
    LC_ALL=C.UTF-8 \
    TZ=UTC \
    PYTHONHASHSEED=0 \
    PYTHONDONTWRITEBYTECODE=1

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python-is-python3 procps \
 && mkdir -p /tmp/debs /tmp/unpacked /opt/endstate/pytest && cd /tmp/debs \
 && apt-get download python3-pytest python3-pluggy python3-iniconfig python3-packaging \
 && for deb in *.deb; do dpkg-deb -x "$deb" /tmp/unpacked; done \
 && cp -a /tmp/unpacked/usr/lib/python3/dist-packages/. /opt/endstate/pytest/ \
 && echo /opt/endstate/pytest > "$(python3 -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/endstate-pytest.pth" \
 && cd / && rm -rf /tmp/debs /tmp/unpacked /var/lib/apt/lists/* \
 && python3 -m pytest --version \
 && useradd --create-home --uid 1000 --shell /bin/bash agent \
 && mkdir -p /workspace && chown agent:agent /workspace

WORKDIR /workspace
