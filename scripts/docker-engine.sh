#!/bin/sh
# A private docker engine for the arena's tests and for trying the docker sandbox on a
# machine that runs none: `dockerd` as root on its own socket, with its own data and exec
# roots, no iptables and no bridge (agents run with `network none`), overlay2 and runc.
#
#   scripts/docker-engine.sh start   # starts it unless it answers already; prints DOCKER_HOST=...
#   scripts/docker-engine.sh stop    # stops the engine this script started
#   scripts/docker-engine.sh env     # prints DOCKER_HOST=... for `export $(...)`
#
# The data root is kept between runs, so the agents' image is built once per machine.
set -u
RUN="${ARENA_DOCKER_RUN:-/run/arena-docker}"
DATA="${ARENA_DOCKER_DATA:-/var/lib/arena-docker}"
SOCK="$RUN/docker.sock"
HOST="unix://$SOCK"

answers() {
    DOCKER_HOST="$HOST" docker version --format '{{.Server.Version}}' >/dev/null 2>&1 \
        || python3 - "$SOCK" <<'PY' >/dev/null 2>&1
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(sys.argv[1])
s.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
sys.exit(0 if b"OK" in s.recv(4096) else 1)
PY
}

case "${1:-}" in
start)
    if answers; then echo "DOCKER_HOST=$HOST"; exit 0; fi
    # An engine of ours that runs but is slow to answer (a loaded machine) is waited for, never
    # replaced: starting another would delete the socket the running one serves.
    if [ -f "$RUN/engine.pid" ] && kill -0 "$(cat "$RUN/engine.pid")" 2>/dev/null; then
        i=0
        while [ $i -lt 60 ]; do
            if answers; then echo "DOCKER_HOST=$HOST"; exit 0; fi
            sleep 0.5; i=$((i + 1))
        done
        echo "docker-engine: dockerd (pid $(cat "$RUN/engine.pid")) runs but has not answered for 30 s; its log: $RUN/dockerd.log" >&2
        exit 1
    fi
    command -v dockerd >/dev/null 2>&1 || { echo "docker-engine: dockerd is not installed (apt install docker.io; here: scripts/system-deps.sh)" >&2; exit 1; }
    [ "$(id -u)" = 0 ] || { echo "docker-engine: starting dockerd needs root" >&2; exit 1; }
    mkdir -p "$RUN" "$DATA"
    rm -f "$SOCK" "$RUN/engine.pid"
    nohup dockerd --host "$HOST" --data-root "$DATA" --exec-root "$RUN/exec" --pidfile "$RUN/engine.pid" \
        --iptables=false --ip6tables=false --bridge=none --storage-driver overlay2 \
        >"$RUN/dockerd.log" 2>&1 </dev/null &
    i=0
    while [ $i -lt 300 ]; do
        if answers; then echo "docker-engine: started dockerd" >&2; echo "DOCKER_HOST=$HOST"; exit 0; fi
        sleep 0.1; i=$((i + 1))
    done
    echo "docker-engine: dockerd did not answer within 30 s; its log:" >&2
    tail -n 20 "$RUN/dockerd.log" >&2
    exit 1
    ;;
stop)
    [ -f "$RUN/engine.pid" ] || exit 0
    pid="$(cat "$RUN/engine.pid")"
    kill "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
    rm -f "$RUN/engine.pid"
    ;;
env)
    echo "DOCKER_HOST=$HOST"
    ;;
*)
    echo "usage: scripts/docker-engine.sh start|stop|env" >&2
    exit 2
    ;;
esac
