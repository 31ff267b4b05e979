#!/bin/sh
# Installs the system packages the arena needs when they are missing: bubblewrap (the
# embedded sandbox), chromium (the site's browser test), and for the docker sandbox a
# docker engine (docker.io) and mmdebstrap (the stand-in base image where no registry answers).
set -u
need=""
command -v bwrap >/dev/null 2>&1 || need="$need bubblewrap"
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v dockerd >/dev/null 2>&1 || need="$need docker.io"
command -v mmdebstrap >/dev/null 2>&1 || need="$need mmdebstrap"
[ -z "$need" ] && exit 0
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: missing:$need; install them with your package manager (needs root and apt-get here)" >&2
    exit 0
fi
echo "system-deps: installing$need" >&2
apt-get update -qq >/dev/null 2>&1 || echo "system-deps: apt-get update failed" >&2
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 \
    || echo "system-deps: could not install$need; the tests that need them will say so" >&2
exit 0
