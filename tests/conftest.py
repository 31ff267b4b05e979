"""Shared test fixtures and paths."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
# The submission key (grader.documents.sealing) of a test session is its own, never the user's: a kit
# built by a test seals to it, and the arena the test runs opens with it.
os.environ["ARENA_CONFIG_DIR"] = tempfile.mkdtemp(prefix="arena-test-config-")
os.environ.pop("ARENA_SUBMISSION_KEY", None)
os.environ.pop("ARENA_SUBMISSION_PUBLIC_KEY", None)
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
@pytest.fixture(scope="session")
def docker_engine():
    """A docker client of an engine that answers: the one DOCKER_HOST names, or else a private
    `dockerd` started for the session (tests/docker_engine.py). Skipped, saying why, only where
    neither is possible: no engine answers and dockerd is not installed, or this is not root."""
    from tests.docker_engine import NoEngine, engine

    try:
        with engine() as client:
            yield client
    except NoEngine as exc:
        pytest.skip(f"docker tests need a docker engine: {exc}")


@pytest.fixture(scope="session")
def docker_sandbox(docker_engine):
    """The docker sandbox, with the agents' image built first where it is missing (offline:
    on a stand-in base where python:3.11-slim cannot be pulled, as `arena image build` says)."""
    import sys

    from grader.sandbox.docker import DockerSandbox
    from tests.docker_engine import ensure_image

    ensure_image(docker_engine, lambda line: print(f"[image] {line}", file=sys.stderr))
    return DockerSandbox()
