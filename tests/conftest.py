"""Shared test fixtures and paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
NO_JIT = os.environ.get("NUMBA_DISABLE_JIT") == "1"

# Deep checks cost minutes in pure Python; with the JIT off they are skipped, with the reason.
skip_without_jit = pytest.mark.skipif(NO_JIT, reason="deep perft needs the JIT (NUMBA_DISABLE_JIT=1)")


@pytest.fixture(scope="session")
def local_sandbox():
    """The embedded sandbox (bubblewrap); skipped, saying why, where it cannot run."""
    from grader.sandbox.local import LocalSandbox, bwrap_problem
    reason = bwrap_problem()
    if reason:
        pytest.skip(reason)
    return LocalSandbox()


# -- a docker engine for the docker sandbox's tests -------------------------------------
ROOT = Path(__file__).resolve().parent.parent
ENGINE_SCRIPT = ROOT / "scripts" / "docker-engine.sh"


@pytest.fixture(scope="session")
def docker_engine():
    """A docker client of an engine that answers: the one DOCKER_HOST names, or else a private
    `dockerd` started by scripts/docker-engine.sh and stopped after the session. The tests are
    skipped (saying why) only where neither is possible: no engine answers and dockerd is not
    installed, or this is not root."""
    import shutil
    import subprocess

    from grader.sandbox.base import LaunchError
    from grader.sandbox.docker import client
    try:
        yield client()
        return
    except LaunchError as exc:
        first = str(exc)
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        pytest.skip(f"docker tests need a docker engine: {first}; and none can be started here "
                    f"({'dockerd is not installed: scripts/system-deps.sh' if shutil.which('dockerd') is None else 'not root'})")
    proc = subprocess.run(["sh", str(ENGINE_SCRIPT), "start"], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"could not start a private docker engine: {proc.stderr.strip()}")
    key, _, value = proc.stdout.strip().splitlines()[-1].partition("=")
    previous = os.environ.get(key)
    os.environ[key] = value
    try:
        yield client()
    finally:
        subprocess.run(["sh", str(ENGINE_SCRIPT), "stop"], capture_output=True)
        if previous is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = previous


@pytest.fixture(scope="session")
def docker_sandbox(docker_engine):
    """The docker sandbox, with the agents' image built first where it is missing (offline:
    on a stand-in base where python:3.11-slim cannot be pulled, as `arena image build` says)."""
    import sys

    from grader.sandbox import image
    from grader.sandbox.docker import DockerSandbox
    try:
        docker_engine.images.get(image.IMAGE_TAG)
    except Exception:
        image.build(docker_engine, image.IMAGE_TAG, log=lambda line: print(f"[image] {line}", file=sys.stderr))
    return DockerSandbox()
