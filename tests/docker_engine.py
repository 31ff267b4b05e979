"""A docker engine for the tests and the benchmarks: the one that answers, or a private one.

`scripts/docker-engine.sh` starts `dockerd` as root on a socket of its own (its own data and
exec roots, no iptables, no bridge); `engine()` uses it when no other engine answers, and the
last process using it stops it afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "docker-engine.sh"


class NoEngine(RuntimeError):
    """No engine answers and none can be started here; the message says why."""


RUN = Path(os.environ.get("ARENA_DOCKER_RUN", "/run/arena-docker"))
LEASES = RUN / "leases"  # one file per process using the private engine, named by its pid
STARTED = RUN / "started-for-tests"  # absent when a person started it: then no test stops it


@contextlib.contextmanager
def held(lock: Path) -> Iterator[None]:
    """One process at a time past this point (pytest-xdist's workers start their sessions
    together: one starts the engine or builds the image, the other then finds it there)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _live_leases() -> list[int]:
    pids = []
    for lease in LEASES.glob("*") if LEASES.is_dir() else []:
        pid = int(lease.name) if lease.name.isdigit() else 0
        if pid and Path(f"/proc/{pid}").exists():
            pids.append(pid)
        else:
            lease.unlink(missing_ok=True)  # its process is gone
    return pids


@contextlib.contextmanager
def engine() -> Iterator:
    """A docker client of an answering engine; where none answers, the private engine is
    started, and stopped again by the last process that leased it (two test runs at once
    share it; an engine a person started, or the machine's own, is never stopped)."""
    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import client

    try:
        found = client()
    except LaunchError as exc:
        found, first = None, str(exc)
    if found is not None and os.environ.get("DOCKER_HOST") != f"unix://{RUN / 'docker.sock'}":
        yield found  # an engine of the machine's own
        return
    if found is None:
        if shutil.which("dockerd") is None:
            raise NoEngine(f"{first}; and dockerd is not installed to start one (scripts/system-deps.sh)")
        if os.geteuid() != 0:
            raise NoEngine(f"{first}; and starting dockerd needs root")
    with held(RUN / "start.lock"):
        proc = subprocess.run(["sh", str(SCRIPT), "start"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"could not start a private docker engine: {proc.stderr.strip()}")
    if "started dockerd" in proc.stderr:
        # Started for tests: the last test run to use it stops it. (Not when it was only slow
        # to answer: an engine someone else started is never stopped here.)
        STARTED.touch()
    key, _, value = proc.stdout.strip().splitlines()[-1].partition("=")
    previous = os.environ.get(key)
    os.environ[key] = value
    LEASES.mkdir(parents=True, exist_ok=True)
    lease = LEASES / str(os.getpid())
    lease.touch()
    try:
        yield client()
    finally:
        lease.unlink(missing_ok=True)
        if STARTED.exists() and not _live_leases():
            subprocess.run(["sh", str(SCRIPT), "stop"], capture_output=True)
            STARTED.unlink(missing_ok=True)
        if previous is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = previous


def ensure_image(c, log) -> None:
    """Build the agents' image where it is missing (as `arena image build` does)."""
    from grader.sandbox import image

    with held(Path(tempfile.gettempdir()) / "arena-image-build.lock"):
        try:
            c.images.get(image.IMAGE_TAG)
        except Exception:
            image.build(c, image.IMAGE_TAG, log=log)
