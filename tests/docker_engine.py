"""A docker engine for the tests and the benchmarks: the one that answers, or a private one.

`scripts/docker-engine.sh` starts `dockerd` as root on a socket of its own (its own data and
exec roots, no iptables, no bridge); `engine()` uses it only when no engine answers, and
stops it again afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "docker-engine.sh"


class NoEngine(RuntimeError):
    """No engine answers and none can be started here; the message says why."""


@contextlib.contextmanager
def engine() -> Iterator:
    """A docker client of an answering engine, started for the duration where none answers."""
    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import client
    try:
        yield client()
        return
    except LaunchError as exc:
        first = str(exc)
    if shutil.which("dockerd") is None:
        raise NoEngine(f"{first}; and dockerd is not installed to start one (scripts/system-deps.sh)")
    if os.geteuid() != 0:
        raise NoEngine(f"{first}; and starting dockerd needs root")
    proc = subprocess.run(["sh", str(SCRIPT), "start"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"could not start a private docker engine: {proc.stderr.strip()}")
    key, _, value = proc.stdout.strip().splitlines()[-1].partition("=")
    previous = os.environ.get(key)
    os.environ[key] = value
    try:
        yield client()
    finally:
        subprocess.run(["sh", str(SCRIPT), "stop"], capture_output=True)
        if previous is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = previous


def ensure_image(c, log) -> None:
    """Build the agents' image where it is missing (as `arena image build` does)."""
    from grader.sandbox import image
    try:
        c.images.get(image.IMAGE_TAG)
    except Exception:
        image.build(c, image.IMAGE_TAG, log=log)
